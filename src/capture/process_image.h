// What the code of one traced process looked like (its executable mappings,
// kept from PERF_RECORD_MMAP2 and /proc/PID/maps), as a libdwfl session:
// symbolisation (ELF symbol tables; debug info from /usr/lib/debug when
// installed) and DWARF CFI unwinding of a copied user stack, both after the
// process may have exited. JIT code is named from /tmp/perf-PID.map.
#ifndef AIPROF_SRC_CAPTURE_PROCESS_IMAGE_H_
#define AIPROF_SRC_CAPTURE_PROCESS_IMAGE_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/capture/perf_sampler.h"

struct Dwfl;
struct Dwfl_Module;

namespace aiprof {

struct SymbolisedFrame {
  // The demangled function; for a pc between a module's symbols (a static
  // or hidden function of a library whose .symtab is stripped: only .dynsym's
  // exported names remain) "libtorch_cpu.so!nearest_symbol_below+0xoff";
  // "libfoo.so+0xoff" in a module without symbols; "0x..." outside modules.
  std::string name;
  std::string module;  // file path, "[perf-map]", "[unknown]"
  bool known = false;    // inside a symbol
  bool nearest = false;  // named after the nearest symbol below (not inside it)
};

class ProcessImage {
 public:
  // `mappings` may hold other processes' rows; only `pid`'s are used.
  ProcessImage(int32_t pid, const std::vector<Mapping>& mappings);
  ~ProcessImage();
  ProcessImage(const ProcessImage&) = delete;
  ProcessImage& operator=(const ProcessImage&) = delete;

  // Unwinds with DWARF CFI from `regs` (kDwarfRegs values) over the stack
  // copy [stack, stack+len) that began at regs[rsp]. Appends pcs leaf first;
  // pcs after the first are return addresses. Returns false when libdwfl
  // could not start (no module covers the pc).
  bool UnwindDwarf(int32_t tid, const uint64_t* regs, const uint8_t* stack, uint32_t len,
                   std::vector<uint64_t>* pcs);
  // Names the code at `pc`; `is_return` looks up pc-1 (a return address).
  const SymbolisedFrame& Symbolise(uint64_t pc, bool is_return);
  size_t module_count() const { return modules_; }
  // Mapped files that could not be opened or read as ELF (e.g. out of file
  // descriptors): their frames are unsymbolised.
  size_t unreadable_module_count() const { return unreadable_modules_; }
  // How many of `pcs` (leaf first) lie in a known module or perf-map entry.
  size_t CountInModules(const uint64_t* pcs, size_t n);

 private:
  struct PerfMapEntry {
    uint64_t start, end;
    std::string name;
  };
  struct Symbol {
    uint64_t start, end;
    const char* name;  // owned by libdwfl
    bool global;
  };
  const std::vector<Symbol>& SymbolsOf(Dwfl_Module* mod);
  void ReportMappings(const std::vector<Mapping>& mappings);
  void LoadPerfMap();

  int32_t pid_;
  Dwfl* dwfl_ = nullptr;
  bool attached_ = false;
  size_t modules_ = 0, unreadable_modules_ = 0;
  std::vector<PerfMapEntry> perf_map_;
  std::unordered_map<uint64_t, SymbolisedFrame> cache_;
  std::unordered_map<Dwfl_Module*, std::vector<Symbol>> symbols_;

 public:
  // State read by the libdwfl callbacks during one UnwindDwarf call.
  struct UnwindState {
    int32_t tid = 0;
    const uint64_t* regs = nullptr;
    const uint8_t* stack = nullptr;
    uint64_t stack_start = 0, stack_len = 0;
    std::vector<uint64_t>* pcs = nullptr;
  };
  UnwindState state_;
};

// Reads the word at `addr` from the unwinder's stack copy; false outside it
// (any addr, up to 2^64 - 1). Visible for testing.
bool ReadStackCopyWord(const ProcessImage::UnwindState& st, uint64_t addr, uint64_t* word);

// Reads /proc/PID/maps into executable mappings (for --pid, taken at attach).
std::vector<Mapping> ReadProcMaps(int32_t pid);

}  // namespace aiprof

#endif  // AIPROF_SRC_CAPTURE_PROCESS_IMAGE_H_
