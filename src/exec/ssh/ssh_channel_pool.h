// Private to the SSH executor: the channels of one SSH connection and the
// work waiting for one, with what it learnt about sshd's limit on them
// (MaxSessions, from refusals), the libssh2 call that is half sent, and the
// work it gave back or lost. It makes no libssh2 call: its connection
// opens, steps and closes the channels (ssh_session.cpp) and asks it what
// to do next.
// Threading: none; its connection steps it from the event loop.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "ssh_channel.h"
#include "ssh_common.h"

namespace runner::ssh {

class ChannelPool {
 public:
  using Channels = std::vector<std::unique_ptr<SshChannel>>;

  // `limit`: the channels sshd allows, if a connection to the host learnt it.
  explicit ChannelPool(std::optional<int> limit) : m_limit(limit) {}

  // Whether more work would be taken up without exceeding what sshd allows.
  bool accepts_work(Clock::time_point now) const;
  // Channels carrying work plus work waiting for one.
  int load() const;
  // Whether a job's command runs or waits here.
  bool has_jobs() const;
  // Whether a channel is open or opening, or work waits for one.
  bool busy() const;
  // Channels that carry work (idle launchers do not).
  long busy_channels() const;
  // Launchers that end because a job left processes behind on them: they
  // hold their sessions until those end.
  long retired_launchers() const;
  // When waiting work may be given a channel again after a refusal, if later than `now`.
  std::optional<Clock::time_point> reopen_at(Clock::time_point now) const;

  // Queues work; signals go before jobs.
  void add(ChannelWork work);
  // Work a channel could not carry after all: first in line again.
  void wait_again(ChannelWork work);
  // Work for another connection to the host (take_returned).
  void give_back(ChannelWork work);
  // Gives every waiting job and signal back; true if there was one.
  bool return_waiting();
  std::vector<ChannelWork> take_returned() { return std::exchange(m_returned, {}); }
  // Takes a waiting job out; false if it does not wait.
  bool remove_waiting_job(TaskId job);
  // Gives waiting work to idle launchers; true if one took some.
  bool assign_to_launchers();
  // Whether another channel (for a signal) fits under sshd's limit.
  bool has_room() const;

  // The channel being opened, if any, and the open ones.
  SshChannel* opening() const { return m_opening.get(); }
  Channels& channels() { return m_channels; }
  const Channels& channels() const { return m_channels; }
  // With none being opened: a channel for the next waiting work, to be
  // opened (opening()), unless nothing waits,
  // a refusal was recent, or the channels are at sshd's limit (then, if
  // retired launchers hold sessions, the waiting work is given back:
  // `gave_back`). `launchers`: a job without input runs on a launcher.
  SshChannel* open_next(Clock::time_point now, bool launchers, bool& gave_back);
  // The channel being opened is open now.
  void opened();
  // The channel being opened is not to be: dropped, or handed to the caller.
  void drop_opening() { m_opening.reset(); }
  std::unique_ptr<SshChannel> take_opening() { return std::move(m_opening); }
  // Whether a refused open probably hit the slot of a channel that just
  // closed; then `work` waits a little (unless it is null) before a retry.
  bool settling(Clock::time_point now) const;
  void retry_shortly(Clock::time_point now, ChannelWork* work);
  // sshd refused a channel with `open_now` open: its limit, as now known.
  std::optional<int> learn_limit(int open_now);
  // A channel ended; it is erased by the caller.
  void closed(Clock::time_point now) { m_last_close = now; }
  void erase(const SshChannel& channel);

  // The libssh2 call that is half sent, on `channel` or (null) the channel
  // open: it is completed before any other call may send.
  void block(SshChannel* channel);
  bool blocked() const { return m_blocked_channel || m_blocked_open; }
  bool blocked_on(const SshChannel& channel) const { return m_blocked_channel == &channel; }
  bool blocked_on_channel() const { return m_blocked_channel; }
  bool blocked_open() const { return m_blocked_open; }
  SshChannel* take_blocked_channel() { return std::exchange(m_blocked_channel, nullptr); }
  bool take_blocked_open() { return std::exchange(m_blocked_open, false); }
  void forget_blocked();
  // Drops every channel (after their session was freed).
  void drop_channels();

  // The connection broke: what its channels carried is lost (a job whose
  // command went out) or never started.
  void lose_channels();
  // The connection failed: the waiting work never started.
  void keep_unstarted();
  // Forgets the waiting work.
  void clear_waiting() { m_waiting.clear(); }
  const std::vector<TaskId>& lost_jobs() const { return m_lost; }
  std::vector<ChannelWork> take_unstarted() { return std::exchange(m_unstarted, {}); }

 private:
  std::deque<ChannelWork> m_waiting;
  std::unique_ptr<SshChannel> m_opening;  // the one channel being opened
  Channels m_channels;
  std::optional<int> m_limit;               // channels sshd allows here
  Clock::time_point m_refused_until{};      // after a refusal below the limit
  Clock::time_point m_last_close{};         // when a channel here last ended
  SshChannel* m_blocked_channel = nullptr;  // its request is half sent
  bool m_blocked_open = false;              // the channel open is half sent
  std::vector<ChannelWork> m_returned;
  std::vector<TaskId> m_lost;
  std::vector<ChannelWork> m_unstarted;
};

}  // namespace runner::ssh
