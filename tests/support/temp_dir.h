// A fresh directory under $TMPDIR for one test, removed with everything in
// it when the object goes away.
#pragma once

#include <string>

namespace runner::testing {

class TempDir {
 public:
  // Under `parent` instead when given, e.g. /dev/shm for one in memory.
  explicit TempDir(const std::string& parent = "");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return m_path; }
  // path() + "/" + name
  std::string file(const std::string& name) const;
  // Writes `text` to path()/name (creating parent folders) and returns the path.
  std::string write(const std::string& name, const std::string& text) const;
  // The contents of path()/name; empty if it does not exist.
  std::string read(const std::string& name) const;

 private:
  std::string m_path;
};

}  // namespace runner::testing
