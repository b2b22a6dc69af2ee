#include "runner/config/allocation.h"

namespace runner {

std::optional<Allocation> parse_allocation(std::string_view text) {
  if (text == "first_fit" || text == "first-fit" || text == "firstfit")
    return Allocation::first_fit;
  if (text == "buddy") return Allocation::buddy;
  return std::nullopt;
}

std::string allocation_name(Allocation allocation) {
  return allocation == Allocation::buddy ? "buddy" : "first_fit";
}

bool allocation_takes(Allocation allocation, int k) {
  if (k <= 0) return false;
  return allocation != Allocation::buddy || (k & (k - 1)) == 0;
}

}  // namespace runner
