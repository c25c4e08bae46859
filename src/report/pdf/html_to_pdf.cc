#include "src/report/pdf/html_to_pdf.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "src/base/atomic_file.h"

extern char** environ;

namespace aiprof {
namespace {

bool Executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

}  // namespace

bool IsPdfPath(const std::string& path) {
  if (path.size() < 4) return false;
  std::string ext = path.substr(path.size() - 4);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".pdf";
}

StatusOr<std::string> FindChromium() {
  if (const char* env = std::getenv("AIPROF_CHROMIUM"); env && *env) {
    if (Executable(env)) return std::string(env);
    return ErrStatus(std::string("AIPROF_CHROMIUM=") + env + " is not an executable file");
  }
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome",
                        "/usr/bin/google-chrome-stable"}) {
    if (Executable(p)) return std::string(p);
  }
  return ErrStatus(
      "PDF output needs headless Chromium, which is not installed (apt-get install chromium, or set "
      "AIPROF_CHROMIUM); write .html or .md instead");
}

Status HtmlToPdf(const std::string& html, const std::string& pdf_path, int timeout_s) {
  ASSIGN_OR_RETURN(std::string chromium, FindChromium());
  std::error_code ec;
  // mkdtemp: a fresh name, mode 0700 (the page holds the whole report; a
  // guessable name could be taken first by another local user).
  std::string tmpl = (std::filesystem::temp_directory_path(ec) / "aiprof-pdf-XXXXXX").string();
  if (ec || mkdtemp(tmpl.data()) == nullptr) {
    return ErrStatus("cannot create a temporary folder for the PDF: " +
                     (ec ? ec.message() : std::string(strerror(errno))));
  }
  const std::filesystem::path dir = tmpl;
  struct Cleanup {
    std::filesystem::path dir;
    ~Cleanup() {
      std::error_code e;
      std::filesystem::remove_all(dir, e);
    }
  } cleanup{dir};
  const std::string page = (dir / "page.html").string(), out = (dir / "page.pdf").string();
  {
    std::ofstream f(page, std::ios::binary);
    f << html;
    if (!f) return ErrStatus("cannot write " + page);
  }
  // Chromium's sandbox guards against the page (trace content, escaped and
  // under a CSP); it cannot start as root, where it is left off.
  std::vector<std::string> args = {chromium,
                                   "--headless",
                                   "--disable-gpu",
                                   "--disable-dev-shm-usage",
                                   "--no-first-run",
                                   "--no-default-browser-check",
                                   "--user-data-dir=" + (dir / "profile").string(),
                                   "--no-pdf-header-footer",
                                   "--print-to-pdf=" + out,
                                   "file://" + page};
  if (geteuid() == 0) args.insert(args.begin() + 2, "--no-sandbox");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string log = (dir / "chromium.log").string();
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // own group, so a time-out kills its helpers too
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, chromium.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return ErrStatus("cannot start " + chromium + ": " + std::string(strerror(rc)));
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0) return ErrStatus("waiting for " + chromium + " failed");
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      return ErrStatus(chromium + " did not print the PDF within " + std::to_string(timeout_s) + " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(-pid, SIGKILL);  // helpers Chromium may leave behind
  struct stat st{};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || stat(out.c_str(), &st) != 0 || st.st_size == 0) {
    std::ifstream l(log);
    std::string tail((std::istreambuf_iterator<char>(l)), std::istreambuf_iterator<char>());
    if (tail.size() > 600) tail = tail.substr(tail.size() - 600);
    return ErrStatus(chromium + " could not print the PDF (exit " +
                     std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + "): " + tail);
  }
  std::ifstream pdf(out, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(pdf)), std::istreambuf_iterator<char>());
  return WriteFileAtomically(pdf_path, bytes);
}

}  // namespace aiprof
