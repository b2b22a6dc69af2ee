// Tasks of a Slurm allocation: each one a local `srun` that starts the
// command in a step of its own on its node, spawned and read as a local
// task is (local_executor.cpp), only started and signalled differently.
//
// Why these srun options: on a node whose slots are its GPUs, and where
// the allocation holds a CPU or more for each, a step asks for its slots'
// GPUs (`--gres=gpu:K`) and their share of the CPUs and memory, and takes
// only that (`--exact`): Slurm then gives each step GPUs no other step
// holds, and sets its CUDA_VISIBLE_DEVICES. It must not `--overlap`: an
// overlapping step that asks for `gpu:1` is given the node's first GPU
// whichever step holds it. Elsewhere (fewer CPUs than GPU slots, or
// --slots-per-node) a step takes no GPU of its own and `--overlap`s the
// others, as without it a step would wait for the CPUs another holds
// (since Slurm 20.11); it sees every GPU the allocation has there, and the
// slot's `gpu` parameter says which one is the task's. Each step is named
// `runner-<pid>-<task>`, so that a signal can find it in `squeue -s`.
#include "runner/exec/slurm/slurm_backend.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "../local_launch.h"
#include "runner/exec/local_executor.h"
#include "runner/exec/shell.h"
#include "runner/exec/slurm/program_output.h"
#include "runner/exec/slurm/slurm_allocation.h"
#include "../spawn_in_own_group.h"

namespace runner {

namespace {

class SrunLaunch final : public LocalLaunch {
 public:
  SrunLaunch(std::string job_id, std::string node, std::optional<SlotShare> share)
      : m_job_id(std::move(job_id)),
        m_node(std::move(node)),
        m_share(share),
        m_srun(program_on_path("srun")) {}

  ~SrunLaunch() override {
    for (pid_t pid : m_signallers) waitpid(pid, nullptr, 0);
  }

  LaunchCommand command_for(TaskId task, const std::string& command, int slots) override {
    std::vector<std::string> argv{"srun", "--jobid=" + m_job_id, "-w", m_node, "-N1", "-n1"};
    if (m_share) {
      argv.insert(argv.end(), {"--exact", fmt::format("--gres=gpu:{}", slots),
                               fmt::format("--cpus-per-task={}", m_share->cpus * slots)});
      if (m_share->memory_mb > 0) argv.push_back(fmt::format("--mem={}M", m_share->memory_mb * slots));
    } else {
      argv.push_back("--overlap");
    }
    argv.insert(argv.end(), {"--job-name=" + step_name(task), "--quiet", "sh", "-c", command});
    return {m_srun, std::move(argv)};
  }

  // Asks Slurm to signal the step: KILL cancels it (`scancel JOB.STEP`
  // kills its tasks, even a step still launching, and srun then ends);
  // another signal goes to its tasks with `scancel --signal`, whose
  // complaints are not kept, because it fails on every node of the
  // allocation that has had no step yet, though the signal was delivered.
  // Where the step does not exist yet, srun's process group gets the signal.
  // Runs in a process of its own: scancel and squeue talk to slurmctld.
  std::string deliver(TaskId task, pid_t pgid, int signal) override {
    reap_signallers();
    std::string name = signal_name(signal);
    std::string script = fmt::format(
        "step=$(squeue -h -s -j {job} -o '%i %j' | awk -v n={step} '$2 == n {{ print $1 }}')\n"
        "if [ -n \"$step\" ] && [ {sig} = KILL ]; then exec scancel \"$step\"; fi\n"
        "if [ -n \"$step\" ]; then exec scancel --signal={sig} \"$step\" 2>/dev/null; fi\n"
        "kill -s {sig} -- -{pgid} 2>/dev/null || ! kill -s 0 -- -{pgid} 2>/dev/null\n",
        fmt::arg("job", shell_quote(m_job_id)), fmt::arg("step", shell_quote(step_name(task))),
        fmt::arg("sig", name), fmt::arg("pgid", pgid));
    const char* argv[] = {"sh", "-c", script.c_str(), nullptr};
    int nothing = open("/dev/null", O_RDWR | O_CLOEXEC);
    pid_t pid = -1;
    int rc =
        spawn_in_own_group(pid, "/bin/sh", argv, ChildStreams{nothing, nothing, k_kept_stream});
    if (nothing >= 0) close(nothing);
    if (rc != 0) return fmt::format("this machine: cannot run /bin/sh: {}", std::strerror(rc));
    m_signallers.push_back(pid);
    return {};
  }

  // srun exits 128 + N when its task was killed by signal N.
  // A task that fails while the allocation is no longer running was ended
  // by Slurm ending the allocation (scancel, requeue, preemption, its time
  // limit), not by its own doing: it is lost, to run again in the next
  // allocation (`runner queue --slurm --resume`), and nothing starts here
  // again (ending()).
  JobExit exit_of(int status) override {
    JobExit exit = srun_exit(status);
    if (exit.code() == 0) return exit;
    std::string state = allocation_state();
    if (state.empty() || state == "RUNNING") return exit;
    std::string why = fmt::format("Slurm is ending allocation {} (state {})", m_job_id, state);
    m_ending = Status(ErrorKind::ended, why);
    return JobExit::lost_because(why);
  }

  Status ending() const override { return m_ending; }

  static JobExit srun_exit(int status) {
    if (WIFSIGNALED(status)) return JobExit::killed(signal_name(WTERMSIG(status)));
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code > 128 && code < 128 + 65) return JobExit::killed(signal_name(code - 128));
    return JobExit::exited(code);
  }

  // The allocation's JobState as slurmctld has it now ("" when it cannot say).
  std::string allocation_state() const {
    Result<std::string> details = program_output({"scontrol", "show", "job", "-o", m_job_id});
    return details ? job_detail_field(*details, "JobState=") : std::string();
  }

  // The node's name, as Slurm knows it (and as its other nodes resolve it).
  std::string address() const override { return m_node; }

 private:
  static std::string step_name(TaskId task) { return fmt::format("runner-{}-{}", getpid(), task); }

  void reap_signallers() {
    std::erase_if(m_signallers, [](pid_t pid) { return waitpid(pid, nullptr, WNOHANG) != 0; });
  }

  std::string m_job_id;
  std::string m_node;
  std::optional<SlotShare> m_share;  // unset: steps overlap
  std::string m_srun;
  std::vector<pid_t> m_signallers;  // scancel helpers not yet reaped
  Status m_ending;                  // ok while the allocation runs
};

}  // namespace

std::vector<std::unique_ptr<Executor>> SlurmBackend::executors(ExecutorEvents& events) {
  std::vector<std::unique_ptr<Executor>> executors;
  for (std::size_t h = 0; h < m_allocation.nodes.size(); ++h)
    executors.push_back(make_local_executor(
        static_cast<int>(h), events,
        std::make_unique<SrunLaunch>(m_allocation.job_id, m_allocation.nodes[h].name,
                                     slot_share(m_allocation.nodes[h], m_fleet, static_cast<int>(h)))));
  return executors;
}

}  // namespace runner
