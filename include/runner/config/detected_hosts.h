// hosts.yaml written from what the hosts themselves say (`runner hosts
// --detect`): a slot per GPU, with its index as `gpu` and its UUID as
// `gpu_uuid`. Pure.
#pragma once

#include <string>
#include <vector>

namespace runner {

// One GPU as nvidia-smi lists it.
struct DetectedGpu {
  std::string index;  // "0"
  std::string name;   // "NVIDIA A100-SXM4-80GB"
  std::string uuid;   // "GPU-1111…"; empty when not listed
};

struct DetectedHost {
  std::string hostname;  // as given on the command line
  std::vector<DetectedGpu> gpus;
  std::string note;  // why it has no GPU slots ("no nvidia-smi"); a comment in the file
};

// The hosts.yaml text: an entry per GPU (hostname, gpu, gpu_uuid, the
// model in a comment), one slot for a host without GPUs. What the hosts
// said reads back as it was, or, in comments, printable().
std::string detected_hosts_yaml(const std::vector<DetectedHost>& hosts);

}  // namespace runner
