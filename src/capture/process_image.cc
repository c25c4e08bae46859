#include "src/capture/process_image.h"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace aiprof {
namespace {

constexpr int kMaxFrames = 256;

char* g_debuginfo_path = nullptr;
const Dwfl_Callbacks kOfflineCallbacks = {
    dwfl_build_id_find_elf,
    dwfl_standard_find_debuginfo,
    dwfl_offline_section_address,
    &g_debuginfo_path,
};

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string Demangle(const char* raw) {
  // "__libc_start_main@@GLIBC_2.34": the symbol version is not part of the name.
  std::string name(raw);
  if (size_t at = name.find('@'); at != std::string::npos && at > 0) name.resize(at);
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return name;
  std::string s(out);
  std::free(out);
  return s;
}

// The load bias of `path` mapped at `start` from file offset `pgoff`: the
// executable PT_LOAD whose page-aligned offset is pgoff.
// False when the file holds no load segment at `pgoff`; sets *unreadable
// (and returns false) when it could not be opened.
bool LoadBias(const std::string& path, uint64_t start, uint64_t pgoff, uint64_t* bias, bool* unreadable) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *unreadable = errno != ENOENT;  // a library removed since is not a shortage of descriptors
    return false;
  }
  bool found = false;
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  size_t n = 0;
  if (elf != nullptr && elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &n) == 0) {
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    for (size_t i = 0; i < n && !found; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_LOAD) continue;
      if ((ph.p_offset & ~(page - 1)) != pgoff) continue;
      *bias = start - ph.p_vaddr + (ph.p_offset - pgoff);
      found = true;
    }
  }
  if (elf != nullptr) elf_end(elf);
  close(fd);
  return found;
}

pid_t NextThread(Dwfl*, void* arg, void** thread_argp) {
  if (*thread_argp != nullptr) return 0;
  *thread_argp = arg;
  return static_cast<ProcessImage::UnwindState*>(arg)->tid;
}

bool GetThread(Dwfl*, pid_t, void* arg, void** thread_argp) {
  *thread_argp = arg;
  return true;
}

bool MemoryRead(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
  uint64_t word = 0;
  if (!ReadStackCopyWord(*static_cast<ProcessImage::UnwindState*>(arg), addr, &word)) return false;
  *result = word;
  return true;
}

bool SetInitialRegisters(Dwfl_Thread* thread, void* arg) {
  auto* st = static_cast<ProcessImage::UnwindState*>(arg);
  Dwarf_Word regs[kDwarfRegs];
  for (int i = 0; i < kDwarfRegs; ++i) regs[i] = st->regs[i];
  return dwfl_thread_state_registers(thread, 0, kDwarfRegs, regs);
}

const Dwfl_Thread_Callbacks kThreadCallbacks = {NextThread, GetThread, MemoryRead, SetInitialRegisters, nullptr,
                                                nullptr};

int FrameCallback(Dwfl_Frame* frame, void* arg) {
  auto* st = static_cast<ProcessImage::UnwindState*>(arg);
  Dwarf_Addr pc = 0;
  bool activation = false;
  if (!dwfl_frame_pc(frame, &pc, &activation) || pc == 0) return DWARF_CB_ABORT;
  st->pcs->push_back(pc);
  return st->pcs->size() >= kMaxFrames ? DWARF_CB_ABORT : DWARF_CB_OK;
}

}  // namespace

std::vector<Mapping> ReadProcMaps(int32_t pid) {
  std::vector<Mapping> out;
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long start = 0, end = 0, off = 0;
    char perms[8] = {0};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &path_at) < 4) continue;
    if (perms[2] != 'x' || path_at <= 0 || path_at >= static_cast<int>(line.size())) continue;
    Mapping m{pid, start, end, off, line.substr(static_cast<size_t>(path_at))};
    out.push_back(std::move(m));
  }
  return out;
}

ProcessImage::ProcessImage(int32_t pid, const std::vector<Mapping>& mappings) : pid_(pid) {
  elf_version(EV_CURRENT);
  dwfl_ = dwfl_begin(&kOfflineCallbacks);
  if (dwfl_ == nullptr) return;
  ReportMappings(mappings);
  LoadPerfMap();
  if (modules_ > 0) attached_ = dwfl_attach_state(dwfl_, nullptr, pid_, &kThreadCallbacks, &state_);
}

ProcessImage::~ProcessImage() {
  if (dwfl_ != nullptr) dwfl_end(dwfl_);
}

void ProcessImage::ReportMappings(const std::vector<Mapping>& mappings) {
  // One module per file: the lowest executable mapping of each path gives the bias.
  std::map<std::string, const Mapping*> first;
  for (const Mapping& m : mappings) {
    if (m.pid != pid_ || m.path.empty() || m.path[0] != '/') continue;
    if (m.path.find(" (deleted)") != std::string::npos) continue;
    auto [it, inserted] = first.emplace(m.path, &m);
    if (!inserted && m.start < it->second->start) it->second = &m;
  }
  dwfl_report_begin(dwfl_);
  for (const auto& [path, m] : first) {
    uint64_t bias = 0;
    bool unreadable = false;
    if (!LoadBias(path, m->start, m->pgoff, &bias, &unreadable)) {
      unreadable_modules_ += unreadable;
      continue;
    }
    const std::string& name = m->name.empty() ? path : m->name;
    if (dwfl_report_elf(dwfl_, name.c_str(), path.c_str(), -1, bias, true) != nullptr) {
      ++modules_;
    } else {
      ++unreadable_modules_;
    }
  }
  dwfl_report_end(dwfl_, nullptr, nullptr);
}

void ProcessImage::LoadPerfMap() {
  // perf map format (perf's Documentation/jit-interface.txt): "START SIZE name", hex.
  std::ifstream in("/tmp/perf-" + std::to_string(pid_) + ".map");
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long start = 0, size = 0;
    int name_at = 0;
    if (std::sscanf(line.c_str(), "%llx %llx %n", &start, &size, &name_at) < 2 || name_at <= 0) continue;
    perf_map_.push_back(PerfMapEntry{start, start + size, line.substr(static_cast<size_t>(name_at))});
  }
  std::sort(perf_map_.begin(), perf_map_.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
}

bool ProcessImage::UnwindDwarf(int32_t tid, const uint64_t* regs, const uint8_t* stack, uint32_t len,
                               std::vector<uint64_t>* pcs) {
  if (!attached_) return false;
  state_.tid = tid;
  state_.regs = regs;
  state_.stack = stack;
  state_.stack_start = regs[7];  // rsp: the copy starts at the stack pointer
  state_.stack_len = len;
  state_.pcs = pcs;
  dwfl_getthread_frames(dwfl_, tid, FrameCallback, &state_);
  return !pcs->empty();
}

// libdwfl's address lookup scans the whole symbol table on every call
// (dwfl_module_addrinfo), which is slow for libraries like libtorch_cpu; the
// function symbols are read once per module and searched by bisection.
const std::vector<ProcessImage::Symbol>& ProcessImage::SymbolsOf(Dwfl_Module* mod) {
  auto [it, inserted] = symbols_.try_emplace(mod);
  if (!inserted) return it->second;
  std::vector<Symbol>& out = it->second;
  const int n = dwfl_module_getsymtab(mod);
  for (int i = 1; i < n; ++i) {
    GElf_Sym sym;
    GElf_Addr addr = 0;
    const char* name = dwfl_module_getsym_info(mod, i, &sym, &addr, nullptr, nullptr, nullptr);
    const int type = GELF_ST_TYPE(sym.st_info);
    if (name == nullptr || *name == '\0' || addr == 0 || (type != STT_FUNC && type != STT_GNU_IFUNC)) continue;
    const bool global = GELF_ST_BIND(sym.st_info) != STB_LOCAL;
    out.push_back(Symbol{addr, addr + (sym.st_size > 0 ? sym.st_size : 1), name, global});
  }
  // By start; among aliases of one address a global name wins over a local
  // one (glibc's "__libc_start_main_alias_2" is a local alias).
  std::stable_sort(out.begin(), out.end(), [](const Symbol& a, const Symbol& b) {
    return a.start != b.start ? a.start < b.start : a.global > b.global;
  });
  out.erase(std::unique(out.begin(), out.end(), [](const Symbol& a, const Symbol& b) { return a.start == b.start; }),
            out.end());
  return out;
}

size_t ProcessImage::CountInModules(const uint64_t* pcs, size_t n) {
  size_t in = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t pc = i > 0 && pcs[i] > 0 ? pcs[i] - 1 : pcs[i];
    if (dwfl_ != nullptr && dwfl_addrmodule(dwfl_, pc) != nullptr) {
      ++in;
    } else if (!perf_map_.empty()) {
      auto pm = std::upper_bound(perf_map_.begin(), perf_map_.end(), pc,
                                 [](uint64_t v, const PerfMapEntry& e) { return v < e.start; });
      in += pm != perf_map_.begin() && pc < std::prev(pm)->end;
    }
  }
  return in;
}

// A symbol farther below a pc than this says nothing about it (libtorch_cpu
// has hidden regions of megabytes after one exported symbol: 27% of the
// nearest-named leaf time of bench/torch_train_loop.py was over 1 MiB away):
// such a pc keeps its module offset.
constexpr uint64_t kMaxNearestSymbolDistance = uint64_t{1} << 20;

const SymbolisedFrame& ProcessImage::Symbolise(uint64_t pc, bool is_return) {
  const uint64_t lookup = is_return && pc > 0 ? pc - 1 : pc;
  auto [it, inserted] = cache_.try_emplace(lookup);
  if (!inserted) return it->second;
  SymbolisedFrame& f = it->second;
  Dwfl_Module* mod = dwfl_ != nullptr ? dwfl_addrmodule(dwfl_, lookup) : nullptr;
  if (mod != nullptr) {
    const char* module_name = dwfl_module_info(mod, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    f.module = module_name != nullptr ? module_name : "[unknown]";
    const std::vector<Symbol>& table = SymbolsOf(mod);
    auto sym = std::upper_bound(table.begin(), table.end(), lookup,
                                [](uint64_t v, const Symbol& e) { return v < e.start; });
    if (sym != table.begin() && lookup < std::prev(sym)->end) {
      f.name = Demangle(std::prev(sym)->name);
      f.known = true;
    } else if (sym != table.begin() && lookup - std::prev(sym)->start < kMaxNearestSymbolDistance) {
      // Between symbols: the library and the nearest symbol below, with the
      // offset from it, so that the frame says where it is without claiming
      // to be that function.
      f.name = f.module.substr(f.module.rfind('/') + 1) + "!" + Demangle(std::prev(sym)->name) + "+" +
               Hex(lookup - std::prev(sym)->start);
      f.nearest = true;
    } else {
      Dwarf_Addr low = 0;
      dwfl_module_info(mod, nullptr, &low, nullptr, nullptr, nullptr, nullptr, nullptr);
      f.name = f.module.substr(f.module.rfind('/') + 1) + "+" + Hex(lookup - low);
    }
    return f;
  }
  auto pm = std::upper_bound(perf_map_.begin(), perf_map_.end(), lookup,
                             [](uint64_t v, const PerfMapEntry& e) { return v < e.start; });
  if (pm != perf_map_.begin() && lookup < std::prev(pm)->end) {
    f.name = std::prev(pm)->name;
    f.module = "[perf-map]";
    f.known = true;
    return f;
  }
  f.name = Hex(pc);
  f.module = "[unknown]";
  return f;
}

// Unwinding through garbage asks for any address, up to 2^64 - 1: the
// bounds are checked by subtraction, so that neither `addr + 8` nor
// `start + len` can wrap (with `addr + 8`, an address within 8 bytes of 2^64
// passed the check and was read far outside the copy: aiprof crashed after
// 4 of about 25 torch training captures on a loaded machine).
bool ReadStackCopyWord(const ProcessImage::UnwindState& st, uint64_t addr, uint64_t* word) {
  if (st.stack == nullptr || addr < st.stack_start || st.stack_len < sizeof(uint64_t) ||
      addr - st.stack_start > st.stack_len - sizeof(uint64_t)) {
    return false;
  }
  std::memcpy(word, st.stack + (addr - st.stack_start), sizeof(uint64_t));
  return true;
}

}  // namespace aiprof
