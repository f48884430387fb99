// etsuite-native-runner: executes one job of the exchange format
// (docs/reference/exchange-format.md) with ExecuTorch's C++ runtime and writes the answer
// in the same format, as backends/harness/remote/agent.py does in Python. It is what runs
// where there is no Python: it needs the ExecuTorch runtime, its kernels and the delegates
// it was linked with (CMakeLists.txt), nothing else.
//
//   etsuite-native-runner --job DIR --outputs OUT [--iterations N]
//   etsuite-native-runner PTE MANIFEST OUT [--iterations N]   (the adb runner's {pte} {inputs} {outputs})
//   etsuite-native-runner --serve [--iterations N]             many jobs on one pipe (a resident agent)
//   etsuite-native-runner --probe                              this binary's backends, as JSON
//   --die-with-parent (Linux)                                  exit when the starting process does
//
// A version 1 job is one call; a version 2 job lists calls (method and inputs each) that run
// in order on one loaded program, so the program's state carries from call to call, and the
// answer lists each call's outputs (output_<call>_<i>.bin).
//
// Besides the outputs, the answer says what the call cost: for a version 1 job a first call
// (whose outputs are the answer's), then N more timed calls (median, p90, min); for either
// version the process's peak resident memory and each method's memory-planned buffers. A
// version 2 job's calls run once each (a timed repeat would change the state); each call's
// time is in its own "timings". Exit status: 0 when the answer is "ok"
// or "missing", 1 for "error", 2 when no answer could be written (bad arguments, an
// unreadable manifest).
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor_ptr.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/platform/runtime.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "json.h"
#include "tar.h"

#ifndef ETSUITE_EXECUTORCH_VERSION
#define ETSUITE_EXECUTORCH_VERSION "unknown"
#endif

namespace {

using etsuite::Json;
using executorch::aten::ScalarType;
using executorch::extension::Module;
using executorch::extension::TensorPtr;
using executorch::runtime::Error;
using executorch::runtime::EValue;

constexpr const char* kFormat = "etsuite-exchange";
constexpr int kVersion = 1;       // one call: "method", "inputs"
constexpr int kCallsVersion = 2;  // a list of "calls" on one loaded program
constexpr int kDefaultIterations = 5;
constexpr unsigned long long kMaxArchiveBytes = 4ULL << 30;  // as agent.MAX_ARCHIVE_BYTES

// torch's dtype names (the manifests' vocabulary) and ExecuTorch's scalar types.
struct DtypeName {
  const char* name;
  ScalarType type;
  size_t size;
};
const DtypeName kDtypes[] = {
    {"float32", ScalarType::Float, 4},  {"float64", ScalarType::Double, 8},
    {"float16", ScalarType::Half, 2},   {"bfloat16", ScalarType::BFloat16, 2},
    {"int64", ScalarType::Long, 8},     {"int32", ScalarType::Int, 4},
    {"int16", ScalarType::Short, 2},    {"int8", ScalarType::Char, 1},
    {"uint8", ScalarType::Byte, 1},     {"bool", ScalarType::Bool, 1},
};

const DtypeName* dtype_by_name(const std::string& name) {
  for (const auto& entry : kDtypes) {
    if (name == entry.name) return &entry;
  }
  return nullptr;
}

const DtypeName* dtype_by_type(ScalarType type) {
  for (const auto& entry : kDtypes) {
    if (entry.type == type) return &entry;
  }
  return nullptr;
}

// A method that needs an operator this binary has no kernel for: the answer is "missing"
// (the runner lacks it, as it may lack a delegate), not an error of the program.
struct MissingOperator : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A failure that becomes the answer's "error" at `stage`.
struct Failure {
  std::string stage;
  std::string message;
};

std::string describe(Error error) {
  char code[16];
  std::snprintf(code, sizeof code, "0x%x", static_cast<unsigned>(error));
  return std::string(executorch::runtime::to_string(error)) + " (" + code + ")";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string folder_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double rounded(double seconds) { return std::round(seconds * 1e9) / 1e9; }  // to the ns

std::string where() {
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  return std::string("ExecuTorch ") + ETSUITE_EXECUTORCH_VERSION + " native runner on " + host;
}

std::vector<std::string> registered_backends() {
  std::vector<std::string> names;
  size_t count = executorch::runtime::get_num_registered_backends();
  for (size_t i = 0; i < count; ++i) {
    auto name = executorch::runtime::get_backend_name(i);
    if (name.ok()) names.emplace_back(*name);
  }
  return names;
}

// The manifest's delegates this binary cannot run, as a "missing" reason ("" if none).
std::string lacking_delegates(const Json& delegates) {
  std::string lacking;
  for (const auto& item : delegates.items()) {
    const std::string& id = item.as_string();
    auto* backend = executorch::runtime::get_backend_class(id.c_str());
    if (backend == nullptr || !backend->is_available()) {
      lacking += (lacking.empty() ? "'" : ", '") + id + "'";
    }
  }
  if (lacking.empty()) return "";
  std::string have;
  for (const auto& name : registered_backends()) have += (have.empty() ? "" : ", ") + name;
  return where() + " has no " + lacking + " (its backends: " + (have.empty() ? "none" : have) + ")";
}

// The job's inputs as values the method takes; `tensors` keeps their storage alive.
std::vector<EValue> decode_inputs(const Json& entries, const std::string& folder,
                                  std::vector<std::vector<uint8_t>>& storage,
                                  std::vector<TensorPtr>& tensors) {
  std::vector<EValue> values;
  storage.reserve(entries.items().size());
  for (const auto& entry : entries.items()) {
    if (!entry.has("file")) {
      const Json& value = entry.get("value");
      const std::string type = entry.get("type").is_string() ? entry.get("type").as_string() : "";
      if (type == "bool") {
        values.emplace_back(value.as_bool());
      } else if (type == "int") {
        values.emplace_back(value.as_integer());
      } else if (type == "float") {
        values.emplace_back(value.as_real());
      } else {
        throw std::runtime_error("an input of type '" + type + "' cannot be given to the runtime");
      }
      continue;
    }
    const std::string file = entry.get("file").as_string();
    const DtypeName* dtype = dtype_by_name(entry.get("dtype").as_string());
    if (dtype == nullptr) {
      throw std::runtime_error("input " + file + ": unsupported dtype '" +
                               entry.get("dtype").as_string() + "'");
    }
    std::vector<executorch::aten::SizesType> sizes;
    size_t count = 1;
    for (const auto& n : entry.get("shape").items()) {
      sizes.push_back(static_cast<executorch::aten::SizesType>(n.as_integer()));
      count *= static_cast<size_t>(n.as_integer());
    }
    std::string data = read_file(folder + "/" + file);
    if (data.size() != count * dtype->size) {
      throw std::runtime_error("input " + file + ": " + std::to_string(data.size()) +
                               " bytes, but its shape and dtype need " +
                               std::to_string(count * dtype->size));
    }
    storage.emplace_back(data.begin(), data.end());
    if (storage.back().empty()) storage.back().resize(1);  // a valid pointer for no elements
    tensors.push_back(executorch::extension::make_tensor_ptr(
        std::move(sizes), storage.back().data(), dtype->type));
    values.emplace_back(*tensors.back());
  }
  return values;
}

// Writes one <prefix>_<i>.bin per tensor output into `out`; returns the manifest entries.
Json encode_outputs(const std::vector<EValue>& outputs, const std::string& out,
                    const std::string& prefix = "output") {
  Json entries = Json::array();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const EValue& value = outputs[i];
    Json entry = Json::object();
    if (value.isTensor()) {
      const auto& tensor = value.toTensor();
      const DtypeName* dtype = dtype_by_type(tensor.scalar_type());
      if (dtype == nullptr) {
        throw std::runtime_error("output " + std::to_string(i) + " has a dtype (" +
                                 std::to_string(static_cast<int>(tensor.scalar_type())) +
                                 ") the exchange format does not name");
      }
      const std::string name = prefix + "_" + std::to_string(i) + ".bin";
      write_file(out + "/" + name, tensor.const_data_ptr(), tensor.nbytes());
      Json shape = Json::array();
      for (auto n : tensor.sizes()) shape.push(static_cast<int64_t>(n));
      entry.set("file", name);
      entry.set("shape", shape);
      entry.set("dtype", dtype->name);
    } else if (value.isInt()) {
      entry.set("value", value.toInt());
      entry.set("type", "int");
    } else if (value.isDouble()) {
      entry.set("value", value.toDouble());
      entry.set("type", "float");
    } else if (value.isBool()) {
      entry.set("value", value.toBool());
      entry.set("type", "bool");
    } else {
      entry.set("value", value.isNone() ? "None" : "?");
      entry.set("type", value.isNone() ? "NoneType" : "unknown");
    }
    entries.push(entry);
  }
  return entries;
}

// Median, 90th percentile (nearest rank) and minimum of the timed calls, in seconds.
Json call_statistics(const std::string& method, std::vector<double> seconds) {
  Json call = Json::object();
  call.set("method", method);
  call.set("iterations", static_cast<int64_t>(seconds.size()));
  if (seconds.empty()) return call;
  std::sort(seconds.begin(), seconds.end());
  size_t n = seconds.size();
  double median = n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
  size_t rank = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n)));
  call.set("median", rounded(median));
  call.set("p90", rounded(seconds[std::max<size_t>(rank, 1) - 1]));
  call.set("min", rounded(seconds.front()));
  return call;
}

// The process's peak resident memory. Linux's VmHWM belongs to this program alone, where
// getrusage's maximum survives exec and would report the forking parent's (a Python host).
int64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;  // kB
  }
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
#ifdef __APPLE__
  return static_cast<int64_t>(usage.ru_maxrss);  // bytes on macOS
#else
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
#endif
}

// Every method's memory-planned buffers (bytes each), as MethodMeta states them.
Json planned_memory(Module& module) {
  Json planned = Json::object();
  auto names = module.method_names();
  if (!names.ok()) return planned;
  std::vector<std::string> sorted(names->begin(), names->end());
  std::sort(sorted.begin(), sorted.end());
  for (const auto& name : sorted) {
    auto meta = module.method_meta(name);
    if (!meta.ok()) continue;
    Json sizes = Json::array();
    for (size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) {
      auto size = meta->memory_planned_buffer_size(i);
      sizes.push(size.ok() ? Json(*size) : Json());
    }
    planned.set(name, sizes);
  }
  return planned;
}

// One call of a job: the method and its input entries.
struct Call {
  std::string method;
  Json inputs;
};

// The calls a manifest asks for; std::invalid_argument says what is wrong with a manifest
// the format does not allow.
std::vector<Call> job_calls(const Json& job) {
  const Json& version = job.get("version");
  int64_t number = version.is_null() ? kVersion : version.is_number() ? version.as_integer() : -1;
  if (number == kVersion) {
    Json inputs = job.get("inputs").is_array() ? job.get("inputs") : Json::array();
    return {{job.get("method").is_string() ? job.get("method").as_string() : "forward", inputs}};
  }
  if (number != kCallsVersion || !version.is_number()) {
    throw std::invalid_argument("manifest version " + version.dump(0) +
                                " is none this runner reads (1, 2)");
  }
  const Json& calls = job.get("calls");
  if (!calls.is_array() || calls.items().empty()) {
    throw std::invalid_argument(
        "a version 2 manifest needs \"calls\": a non-empty list of "
        "{\"method\": NAME, \"inputs\": [...]}");
  }
  std::vector<Call> found;
  for (size_t i = 0; i < calls.items().size(); ++i) {
    const Json& call = calls.items()[i];
    if (!call.is_object() || !call.get("method").is_string() || !call.get("inputs").is_array()) {
      throw std::invalid_argument("call " + std::to_string(i) +
                                  " of the manifest needs \"method\" (a name) and \"inputs\" (a list)");
    }
    found.push_back({call.get("method").as_string(), call.get("inputs")});
  }
  return found;
}

// Runs the job; fills `answer` (status, outputs, timings, cost) and writes `out`.
void execute_job(const std::string& pte, const std::string& manifest_path,
                 const std::string& out, int iterations_option, Json& answer) {
  auto started = std::chrono::steady_clock::now();
  Json job = Json::parse(read_file(manifest_path));
  int iterations = iterations_option >= 0                 ? iterations_option
                   : job.get("iterations").is_number() ? static_cast<int>(job.get("iterations").as_integer())
                                                         : kDefaultIterations;
  const bool listed = !job.get("version").is_null() && !(job.get("version").is_number() &&
                                                         job.get("version").as_integer() == kVersion);
  answer.set("version", listed ? kCallsVersion : kVersion);
  Json timings = Json::object();
  timings.set("startup", rounded(seconds_since(started)));

  std::vector<Call> calls;
  try {
    calls = job_calls(job);
  } catch (const std::invalid_argument& error) {
    answer.set("status", "error");
    answer.set("stage", "load");
    answer.set("error", std::string("malformed manifest: ") + error.what());
    answer.set("timings", timings);
    return;
  }

  std::string reason = lacking_delegates(job.get("delegates"));
  if (!reason.empty()) {
    answer.set("status", "missing");
    answer.set("reason", reason);
    answer.set("timings", timings);
    return;
  }

  std::vector<std::string> methods;
  for (const auto& call : calls) {
    if (std::find(methods.begin(), methods.end(), call.method) == methods.end()) {
      methods.push_back(call.method);
    }
  }
  Failure failure{"load", ""};
  try {
    auto begin = std::chrono::steady_clock::now();
    // Methods exported to share their mutable buffers (one KV cache for prefill and
    // decode) need the Module's shared memory arenas.
    Module module(pte, Module::LoadMode::File, nullptr, nullptr, nullptr, methods.size() > 1);
    // Verified as the in-process runtime (executorch.runtime) verifies a program.
    Error error = module.load(executorch::runtime::Program::Verification::InternalConsistency);
    if (error != Error::Ok) throw std::runtime_error("loading the program failed: " + describe(error));
    for (const auto& method : methods) {
      error = module.load_method(method);
      if (error == Error::OperatorMissing) {
        throw MissingOperator(
            "this native runner has no kernel for an operator of method '" + method + "' (" +
            describe(error) + "): operators registered from Python, such as "
            "executorch.extension.llm.custom_ops, are not linked into it");
      }
      if (error != Error::Ok) {
        throw std::runtime_error("loading method '" + method + "' failed: " + describe(error));
      }
    }
    std::vector<std::vector<uint8_t>> storage;
    std::vector<TensorPtr> tensors;
    std::vector<std::vector<EValue>> inputs;
    for (const auto& call : calls) {
      inputs.push_back(decode_inputs(call.inputs, folder_of(manifest_path), storage, tensors));
    }
    timings.set("load", rounded(seconds_since(begin)));

    failure.stage = "run";
    // Test-only, as agent.py's: ETSUITE_AGENT_FAULT=abort is a native crash inside the run.
    const char* fault = std::getenv("ETSUITE_AGENT_FAULT");
    if (fault != nullptr && std::string(fault) == "abort") std::abort();
    Json answers = Json::array();
    double ran = 0;
    for (size_t k = 0; k < calls.size(); ++k) {
      const std::string& method = calls[k].method;
      begin = std::chrono::steady_clock::now();
      auto result = module.execute(method, inputs[k]);
      if (!result.ok()) {
        std::string which = listed ? "call " + std::to_string(k) + " (" + method + "): " : "";
        throw std::runtime_error(which + "executing '" + method + "' failed: " +
                                 describe(result.error()));
      }
      double seconds = seconds_since(begin);
      ran += seconds;
      // written before a later call (or another method sharing the arenas) reuses the memory
      Json entries = encode_outputs(*result, out, listed ? "output_" + std::to_string(k) : "output");
      Json call = Json::object();
      call.set("method", method);
      call.set("outputs", entries);
      Json call_timings = Json::object();
      call_timings.set("run", rounded(seconds));
      call.set("timings", call_timings);
      answers.push(call);
    }
    timings.set("run", rounded(ran));
    Json cost = Json::object();
    if (listed) {
      answer.set("calls", answers);
    } else {
      answer.set("outputs", answers.items()[0].get("outputs"));
      const std::string& method = calls[0].method;
      std::vector<double> seconds;
      auto repeat = std::chrono::steady_clock::now();
      for (int i = 0; i < iterations; ++i) {
        begin = std::chrono::steady_clock::now();
        auto again = module.execute(method, inputs[0]);
        if (!again.ok()) {
          throw std::runtime_error("timed call " + std::to_string(i + 1) + " of '" + method +
                                   "' failed: " + describe(again.error()));
        }
        seconds.push_back(seconds_since(begin));
      }
      timings.set("repeat", rounded(seconds_since(repeat)));
      Json timed = Json::array();
      timed.push(call_statistics(method, seconds));
      cost.set("calls", timed);
    }
    cost.set("peak_rss_bytes", peak_rss_bytes());
    cost.set("planned_memory", planned_memory(module));
    answer.set("status", "ok");
    answer.set("cost", cost);
  } catch (const MissingOperator& missing) {
    answer.set("status", "missing");
    answer.set("reason", missing.what());
  } catch (const std::exception& error) {
    answer.set("status", "error");
    answer.set("outputs", Json::array());
    answer.set("stage", failure.stage);
    answer.set("error", error.what());
  }
  answer.set("timings", timings);
}

int usage(const char* problem) {
  std::cerr << "etsuite-native-runner: " << problem << "\n"
            << "usage: etsuite-native-runner --job DIR --outputs OUT [--iterations N]\n"
            << "       etsuite-native-runner PTE MANIFEST OUT [--iterations N]\n"
            << "       etsuite-native-runner --serve [--iterations N]   (jobs on stdin, answers on stdout)\n"
            << "       etsuite-native-runner --probe\n";
  return 2;
}

// One job: the answer written to `outputs`; the exit status main gives for it.
int run_one(const std::string& job_folder, std::string pte, const std::string& manifest,
            const std::string& outputs, int iterations) {
  Json answer = Json::object();
  answer.set("format", kFormat);
  answer.set("version", kVersion);
  answer.set("byte_order", "little");
  answer.set("runtime", where());
  answer.set("outputs", Json::array());
  try {
    if (pte.empty()) {
      Json job = Json::parse(read_file(manifest));
      pte = job_folder + "/" + (job.get("program").is_string() ? job.get("program").as_string() : "program.pte");
    }
    mkdir(outputs.c_str(), 0755);  // an existing folder is fine
    execute_job(pte, manifest, outputs, iterations, answer);
    std::string text = answer.dump(1) + "\n";
    write_file(outputs + "/manifest.json", text.data(), text.size());
  } catch (const std::exception& error) {
    std::cerr << "etsuite-native-runner: " << error.what() << "\n";
    return 2;
  }
  return answer.get("status").as_string() == "error" ? 1 : 0;
}

// The regular files of a folder, sorted by name.
std::vector<etsuite::TarFile> folder_files(const std::string& folder) {
  std::vector<etsuite::TarFile> files;
  if (DIR* dir = opendir(folder.c_str())) {
    while (dirent* entry = readdir(dir)) {
      std::string name = entry->d_name;
      struct stat info {};
      if (stat((folder + "/" + name).c_str(), &info) == 0 && S_ISREG(info.st_mode))
        files.emplace_back(name, read_file(folder + "/" + name));
    }
    closedir(dir);
  }
  std::sort(files.begin(), files.end());
  return files;
}

void remove_folder(const std::string& folder) {
  for (const auto& [name, data] : folder_files(folder)) unlink((folder + "/" + name).c_str());
  rmdir(folder.c_str());
}

// Each job's peak memory is its own: Linux resets VmHWM on "5" in clear_refs.
void reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  if (clear) clear << "5";
}

// The SIZE of a `job SIZE` line: digits only, at most kMaxArchiveBytes (strtoull alone
// would take "-1" as the largest size there is).
bool job_size(const std::string& line, unsigned long long& size) {
  if (line.rfind("job ", 0) != 0 || line.size() == 4 || line.size() > 4 + 12) return false;
  size = 0;
  for (size_t i = 4; i < line.size(); ++i) {
    if (line[i] < '0' || line[i] > '9') return false;
    size = size * 10 + static_cast<unsigned long long>(line[i] - '0');
  }
  return size <= kMaxArchiveBytes;
}

// --serve: many jobs on one pipe, as agent.py --serve does (the resident agent of
// remote/resident.py): a line `ready {...}`, then for each `job SIZE` line and SIZE bytes
// of job tar, a line `done SIZE` and SIZE bytes of the answer's tar. Ends at end of input.
int serve(int iterations) {
  FILE* answers = fdopen(dup(1), "wb");
  dup2(2, 1);  // the runtime's prints must not corrupt the answers
  Json hello = Json::object();
  Json versions = Json::array();
  versions.push(kVersion);
  versions.push(kCallsVersion);
  hello.set("versions", versions);
  hello.set("runtime", where());
  hello.set("agent", "native");
  std::fprintf(answers, "ready %s\n", hello.dump(0).c_str());
  std::fflush(answers);
  std::string line;
  while (std::getline(std::cin, line)) {
    unsigned long long size = 0;
    if (!job_size(line, size))
      return usage(("expected 'job SIZE' with SIZE a count up to " + std::to_string(kMaxArchiveBytes) +
                    ", got " + line.substr(0, 80)).c_str());
    std::string archive(size, '\0');
    if (!std::cin.read(archive.data(), static_cast<std::streamsize>(size))) return usage("a job's tar is cut short");
    char scratch[] = "/tmp/etsuite-native-XXXXXX";
    if (!mkdtemp(scratch)) return usage("cannot make a scratch folder");
    std::string job = std::string(scratch) + "/job", out = std::string(scratch) + "/out";
    mkdir(job.c_str(), 0755);
    mkdir(out.c_str(), 0755);
    try {
      for (const auto& [name, data] : etsuite::read_tar(archive)) write_file(job + "/" + name, data.data(), data.size());
    } catch (const std::exception& error) {
      std::cerr << "etsuite-native-runner: " << error.what() << "\n";  // no manifest: the host says so
    }
    reset_peak_rss();
    run_one(job, "", job + "/manifest.json", out, iterations);
    std::string reply = etsuite::write_tar(folder_files(out));
    std::fprintf(answers, "done %zu\n", reply.size());
    std::fwrite(reply.data(), 1, reply.size(), answers);
    std::fflush(answers);
    remove_folder(job);
    remove_folder(out);
    rmdir(scratch);
  }
  return 0;
}

}  // namespace

// --die-with-parent: killed with the process that started it (the host's `native` kind,
// whose test may be killed at its time limit), as the host's other runners are.
bool die_with_parent() {
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  return getppid() != 1;  // that parent is gone already
#else
  return true;
#endif
}

int main(int argc, char** argv) {
  executorch::runtime::runtime_init();
  std::string job_folder, outputs;
  std::vector<std::string> positional;
  int iterations = -1;
  bool serving = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--probe") {
      Json probe = Json::object();
      probe.set("runtime", where());
      Json backends = Json::array();
      for (const auto& name : registered_backends()) backends.push(name);
      probe.set("backends", backends);
      std::cout << probe.dump(0) << "\n";
      return 0;
    } else if (arg == "--serve") {
      serving = true;
    } else if (arg == "--die-with-parent") {
      if (!die_with_parent()) return 2;
    } else if (arg == "--job") {
      job_folder = value();
    } else if (arg == "--outputs") {
      outputs = value();
    } else if (arg == "--iterations") {
      std::string text = value();
      char* end = nullptr;
      long n = std::strtol(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || n < 0) return usage("--iterations wants a count >= 0");
      iterations = static_cast<int>(n);
    } else if (!arg.empty() && arg[0] == '-') {
      return usage(("unknown option " + arg).c_str());
    } else {
      positional.push_back(arg);
    }
  }
  if (serving) {
    if (!job_folder.empty() || !positional.empty() || !outputs.empty())
      return usage("--serve takes its jobs on stdin: no --job, --outputs or files");
    return serve(iterations);
  }
  std::string pte, manifest;
  if (!job_folder.empty() && positional.empty()) {
    manifest = job_folder + "/manifest.json";
  } else if (job_folder.empty() && positional.size() == 3 && outputs.empty()) {
    pte = positional[0];
    manifest = positional[1];
    outputs = positional[2];
  } else {
    return usage("give --job DIR --outputs OUT, or PTE MANIFEST OUT");
  }
  if (outputs.empty()) return usage("give --outputs OUT");
  return run_one(job_folder, pte, manifest, outputs, iterations);
}
