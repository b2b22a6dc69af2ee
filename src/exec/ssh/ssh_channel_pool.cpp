// The channels of one SSH connection and the work waiting for one: the
// order work is taken in, what counts as load under sshd's MaxSessions, the
// limit learnt from refusals and the pause after one, and the work given
// back or lost. No libssh2 call is made here. Threading: none.
#include "ssh_channel_pool.h"

#include <algorithm>

namespace runner::ssh {

namespace {

constexpr auto k_refusal_pause = std::chrono::milliseconds(20);
// sshd frees a session slot only after a loop iteration that follows our
// channel close; an open that arrives with the close may still be refused.
constexpr auto k_close_settling = std::chrono::milliseconds(200);

}  // namespace

bool ChannelPool::accepts_work(Clock::time_point now) const {
  if (now < m_refused_until) return false;
  return !m_limit || load() < *m_limit;
}

long ChannelPool::busy_channels() const {
  return std::count_if(m_channels.begin(), m_channels.end(),
                       [](const auto& channel) { return !channel->idle(); });
}

int ChannelPool::load() const {
  // An idle launcher takes the next job: it counts as room, not load. A
  // retired one (a job left processes behind on it) keeps its session until
  // they end: that is load, so that under MaxSessions the pool places the
  // next job on another connection instead of waiting for them.
  return static_cast<int>(busy_channels() + retired_launchers() + (m_opening ? 1 : 0) +
                          static_cast<long>(m_waiting.size()));
}

long ChannelPool::retired_launchers() const {
  return std::count_if(m_channels.begin(), m_channels.end(), [](const auto& channel) {
    return channel->is_launcher() && channel->idle() && channel->step != SshChannel::Step::run;
  });
}

bool ChannelPool::has_jobs() const {
  auto is_job = [](const ChannelWork& work) { return work.kind == ChannelWork::Kind::job; };
  if (std::any_of(m_waiting.begin(), m_waiting.end(), is_job)) return true;
  if (m_opening && is_job(m_opening->work) && !m_opening->silent) return true;
  return std::any_of(m_channels.begin(), m_channels.end(), [&](const auto& channel) {
    return is_job(channel->work) && !channel->silent;
  });
}

bool ChannelPool::busy() const { return m_opening || !m_waiting.empty() || busy_channels() > 0; }

std::optional<Clock::time_point> ChannelPool::reopen_at(Clock::time_point now) const {
  if (!m_waiting.empty() && m_refused_until > now) return m_refused_until;
  return std::nullopt;
}

void ChannelPool::add(ChannelWork work) {
  if (work.kind == ChannelWork::Kind::signal) {
    auto first_job = std::find_if(m_waiting.begin(), m_waiting.end(), [](const ChannelWork& w) {
      return w.kind != ChannelWork::Kind::signal;
    });
    m_waiting.insert(first_job, std::move(work));
  } else {
    m_waiting.push_back(std::move(work));
  }
}

void ChannelPool::wait_again(ChannelWork work) { m_waiting.push_front(std::move(work)); }

void ChannelPool::give_back(ChannelWork work) { m_returned.push_back(std::move(work)); }

bool ChannelPool::return_waiting() {
  bool returned = false;
  while (!m_waiting.empty()) {
    if (m_waiting.front().kind != ChannelWork::Kind::pump) {
      m_returned.push_back(std::move(m_waiting.front()));
      returned = true;
    }
    m_waiting.pop_front();
  }
  return returned;
}

bool ChannelPool::remove_waiting_job(TaskId job) {
  for (auto it = m_waiting.begin(); it != m_waiting.end(); ++it) {
    if (it->kind == ChannelWork::Kind::job && it->job == job) {
      m_waiting.erase(it);
      return true;
    }
  }
  return false;
}

bool ChannelPool::assign_to_launchers() {
  bool assigned = false;
  for (auto& channel : m_channels) {
    if (m_waiting.empty()) return assigned;
    if (!channel->is_launcher() || channel->step != SshChannel::Step::run || !channel->idle())
      continue;
    ChannelWork::Kind kind = m_waiting.front().kind;
    if (kind != ChannelWork::Kind::job && kind != ChannelWork::Kind::signal) return assigned;
    // A job that reads input has a channel of its own.
    if (!m_waiting.front().input.empty()) return assigned;
    channel->work = std::move(m_waiting.front());
    m_waiting.pop_front();
    channel->step = SshChannel::Step::write_line;
    assigned = true;
  }
  return assigned;
}

bool ChannelPool::has_room() const {
  int in_use = static_cast<int>(m_channels.size() + (m_opening ? 1 : 0));
  return !m_limit || in_use < *m_limit;
}

SshChannel* ChannelPool::open_next(Clock::time_point now, bool launchers, bool& gave_back) {
  gave_back = false;
  if (m_waiting.empty() || now < m_refused_until) return nullptr;
  if (m_limit && static_cast<int>(m_channels.size()) >= *m_limit &&
      m_waiting.front().kind != ChannelWork::Kind::tunnel) {
    // Retired launchers keep their sessions until what their jobs left
    // behind ends: the pool places the work on another connection.
    if (retired_launchers() > 0) gave_back = return_waiting();
    return nullptr;
  }
  m_opening = std::make_unique<SshChannel>();
  m_opening->work = std::move(m_waiting.front());
  m_waiting.pop_front();
  if (m_opening->work.kind == ChannelWork::Kind::tunnel) {
    m_opening->per_kind.emplace<TunnelChannel>();
  } else {
    m_opening->exec().launcher = m_opening->work.kind == ChannelWork::Kind::job &&
                                 m_opening->work.input.empty() && launchers;
  }
  return m_opening.get();
}

void ChannelPool::opened() { m_channels.push_back(std::move(m_opening)); }

bool ChannelPool::settling(Clock::time_point now) const {
  return m_last_close != Clock::time_point{} && now - m_last_close < k_close_settling;
}

void ChannelPool::retry_shortly(Clock::time_point now, ChannelWork* work) {
  if (work) m_waiting.push_front(std::move(*work));
  m_refused_until = now + k_refusal_pause;
}

std::optional<int> ChannelPool::learn_limit(int open_now) {
  if (!m_limit || open_now < *m_limit) m_limit = open_now;
  return m_limit;
}

void ChannelPool::erase(const SshChannel& channel) {
  m_channels.erase(std::find_if(m_channels.begin(), m_channels.end(),
                                [&](const auto& c) { return c.get() == &channel; }));
}

void ChannelPool::block(SshChannel* channel) {
  if (channel) {
    m_blocked_channel = channel;
  } else {
    m_blocked_open = true;
  }
}

void ChannelPool::forget_blocked() {
  m_blocked_channel = nullptr;
  m_blocked_open = false;
}

void ChannelPool::drop_channels() {
  m_channels.clear();
  m_opening.reset();
}

void ChannelPool::lose_channels() {
  auto collect = [&](SshChannel& channel) {
    if (channel.silent || channel.idle()) return;
    if (channel.exec_attempted) {
      if (channel.work.kind == ChannelWork::Kind::job) m_lost.push_back(channel.work.job);
    } else {
      m_unstarted.push_back(channel.work);
    }
  };
  for (auto& channel : m_channels) collect(*channel);
  if (m_opening) collect(*m_opening);
}

void ChannelPool::keep_unstarted() {
  while (!m_waiting.empty()) {
    m_unstarted.push_back(std::move(m_waiting.front()));
    m_waiting.pop_front();
  }
}

}  // namespace runner::ssh
