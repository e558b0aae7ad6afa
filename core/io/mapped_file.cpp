#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "io/atomic_file.h"

namespace nf {

MappedFile MappedFile::open(const std::string& path) {
  const OpenedFile opened = openRegularFile(path);  // never map a FIFO or a device
  const int fd = opened.fd;
  MappedFile file;
  file.m_size = opened.size;
  if (file.m_size > 0) {  // mmap refuses a zero length; an empty file is simply no bytes
    void* map = ::mmap(nullptr, file.m_size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int error = errno;
    ::close(fd);
    if (map == MAP_FAILED) throw FileError(path, std::string("mmap failed: ") + std::strerror(error));
    file.m_map = map;
  } else {
    ::close(fd);
  }
  return file;
}

MappedFile::~MappedFile() {
  if (m_map) ::munmap(m_map, m_size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept { *this = std::move(other); }

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (m_map) ::munmap(m_map, m_size);
    m_map = std::exchange(other.m_map, nullptr);
    m_size = std::exchange(other.m_size, 0);
  }
  return *this;
}

}  // namespace nf
