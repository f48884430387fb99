// The native runner's tar and JSON readers (backends/harness/remote/cpp/) on their own, for
// test/test_fuzz_exchange.py: `driver tar` or `driver json` reads one input on stdin.
// Exit 0: read (tar: a JSON list of [name, size] per file; json: the value written back),
// exit 1: refused with a message. Anything else (a signal, a hang) is a bug the fuzzer finds.
#include <exception>
#include <iostream>
#include <iterator>
#include <string>

#include "json.h"
#include "tar.h"

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  try {
    if (mode == "tar") {
      etsuite::Json files = etsuite::Json::array();
      for (const auto& [name, data] : etsuite::read_tar(input)) {
        etsuite::Json file = etsuite::Json::array();
        file.push(name);
        file.push(static_cast<int64_t>(data.size()));
        files.push(file);
      }
      std::cout << files.dump(0);
    } else if (mode == "json") {
      std::cout << etsuite::Json::parse(input).dump(0);
    } else {
      std::cerr << "usage: driver tar|json < input\n";
      return 2;
    }
  } catch (const std::exception& error) {
    std::cerr << "refused: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
