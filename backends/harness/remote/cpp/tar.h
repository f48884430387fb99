// The few tar files a resident agent's jobs travel in (remote/resident.py): regular files
// with plain names, in ustar form. Reading skips anything else (pax headers, folders);
// writing makes what Python's tarfile and tar(1) read.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace etsuite {

using TarFile = std::pair<std::string, std::string>;  // (plain name, contents)

// The regular files of an archive; std::runtime_error when it is not a tar.
std::vector<TarFile> read_tar(const std::string& archive);

// An archive of the files, in order.
std::string write_tar(const std::vector<TarFile>& files);

}  // namespace etsuite
