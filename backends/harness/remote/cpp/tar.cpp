#include "tar.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace etsuite {
namespace {

constexpr size_t kBlock = 512;

size_t octal(const char* field, size_t width) {
  size_t value = 0;
  for (size_t i = 0; i < width && field[i]; ++i) {
    if (field[i] == ' ') continue;
    if (field[i] < '0' || field[i] > '7') throw std::runtime_error("tar: a size is not octal");
    value = value * 8 + static_cast<size_t>(field[i] - '0');
  }
  return value;
}

size_t padded(size_t size) { return (size + kBlock - 1) / kBlock * kBlock; }

}  // namespace

std::vector<TarFile> read_tar(const std::string& archive) {
  std::vector<TarFile> files;
  size_t at = 0;
  while (at + kBlock <= archive.size()) {
    const char* header = archive.data() + at;
    if (header[0] == '\0') break;  // the end-of-archive blocks
    std::string name(header, strnlen(header, 100));
    size_t size = octal(header + 124, 12);
    char type = header[156];
    at += kBlock;
    if (at + size > archive.size()) throw std::runtime_error("tar: the archive is cut short");
    size_t slash = name.find_last_of('/');
    std::string plain = slash == std::string::npos ? name : name.substr(slash + 1);
    if ((type == '0' || type == '\0') && !plain.empty() && plain != "." && plain != "..") {
      files.emplace_back(plain, archive.substr(at, size));
    }
    at += padded(size);
  }
  return files;
}

std::string write_tar(const std::vector<TarFile>& files) {
  std::string archive;
  for (const auto& [name, data] : files) {
    if (name.size() >= 100) throw std::runtime_error("tar: a name is too long: " + name);
    char header[kBlock] = {};
    std::memcpy(header, name.data(), name.size());
    std::snprintf(header + 100, 8, "%07o", 0644);
    std::snprintf(header + 108, 8, "%07o", 0);
    std::snprintf(header + 116, 8, "%07o", 0);
    std::snprintf(header + 124, 12, "%011llo", static_cast<unsigned long long>(data.size()));
    std::snprintf(header + 136, 12, "%011o", 0);
    header[156] = '0';
    std::memcpy(header + 257, "ustar", 6);
    std::memcpy(header + 263, "00", 2);
    std::memset(header + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned char byte : header) sum += byte;
    std::snprintf(header + 148, 8, "%06o", sum);  // six digits, a NUL, then the space kept
    header[155] = ' ';
    archive.append(header, kBlock);
    archive.append(data);
    archive.append(padded(data.size()) - data.size(), '\0');
  }
  archive.append(2 * kBlock, '\0');
  return archive;
}

}  // namespace etsuite
