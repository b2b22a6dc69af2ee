// The numbers of a collected output file: output_numbers on any text, read
// as the `.json`, `.csv` and `.tsv` file it could be.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runner/report/job_metrics.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (std::string_view name : {"metrics.json", "results.csv", "results.tsv"})
    runner::output_numbers(name, text);
  return 0;
}
