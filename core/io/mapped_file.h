// A read-only memory map of a whole file (safetensors weights, token datasets): the OS pages it in on
// demand, so a 20 GB dataset costs no memory until it is read.
#pragma once
#include <cstddef>
#include <string>

namespace nf {

class MappedFile {
 public:
  static MappedFile open(const std::string& path);  // throws FileError naming the file
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return static_cast<const std::byte*>(m_map); }
  std::size_t size() const { return m_size; }

 private:
  void* m_map = nullptr;
  std::size_t m_size = 0;
};

}  // namespace nf
