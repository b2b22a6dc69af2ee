// How the run ends: whether it takes no more jobs (it is stopping: an
// interrupt, a service that failed, the allocation's end, a broadcast step
// that failed, no time left for another job), whether a second interrupt
// cancels what runs, how many jobs failed, whether jobs remained that no
// usable host could run; and the run's exit code from them.
#pragma once

namespace runner {

class RunOutcome {
 public:
  // No job is taken any more; the running ones end.
  void stop() { m_stopping = true; }
  bool stopping() const { return m_stopping; }
  // First interrupt: the run stops, and exits 130 unless it was stopping
  // already.
  void interrupt() {
    if (m_stopping) return;
    m_stopping = true;
    m_interrupted = true;
  }
  // Second interrupt: the running jobs are stopped; staged ones do not start.
  void cancel() {
    interrupt();
    m_cancelling = true;
  }
  bool cancelling() const { return m_cancelling; }

  void failed(int jobs = 1) { m_failures += jobs; }
  // Jobs remained that no usable host could run.
  void mark_unrunnable() { m_unrunnable = true; }
  bool unrunnable() const { return m_unrunnable; }

  // 130: interrupted; 1: a job failed or could not run, or `jobs_wait` (for
  // `--resume`); 0: every job succeeded.
  int exit_code(bool jobs_wait) const {
    if (m_interrupted) return 130;
    if (m_failures > 0 || m_unrunnable || jobs_wait) return 1;
    return 0;
  }

 private:
  bool m_stopping = false;
  bool m_interrupted = false;
  bool m_cancelling = false;
  int m_failures = 0;
  bool m_unrunnable = false;
};

}  // namespace runner
