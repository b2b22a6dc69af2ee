// Private to exec: a function run on a stack of its own that can pause
// and hand control back to whoever resumed it. Code that pulls its input
// (libarchive's reader asks for the next bytes) is driven this way by code
// that is pushed its input (the event loop hands over bytes as they
// arrive). Threading: one thread; resume() and yield() switch stacks
// (ucontext), nothing runs concurrently.
#pragma once

#include <ucontext.h>

#include <cstddef>
#include <functional>

namespace runner {

class Coroutine {
 public:
  // `body` runs at the first resume(). It must not let an exception out.
  explicit Coroutine(std::function<void()> body);
  // The body must have ended (or never started): its stack goes away.
  ~Coroutine();
  Coroutine(const Coroutine&) = delete;
  Coroutine& operator=(const Coroutine&) = delete;

  // False when no stack could be had (out of memory): resume() does nothing.
  bool usable() const { return m_stack != nullptr; }
  // Runs the body until it yields or ends. Only from outside the body.
  void resume();
  // Back to the caller of resume(). Only from inside the body.
  void yield();
  bool ended() const { return m_ended; }

 private:
  static void enter(unsigned high, unsigned low);

  std::function<void()> m_body;
  void* m_stack = nullptr;  // mapped, its lowest page a guard
  std::size_t m_stack_bytes = 0;
  ucontext_t m_inside{};
  ucontext_t m_outside{};
  bool m_started = false;
  bool m_ended = false;
};

}  // namespace runner
