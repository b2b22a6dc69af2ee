#include "coroutine.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cassert>
#include <cstdint>
#include <utility>

namespace runner {

namespace {

// Enough for libarchive's reader and disk writer with room to spare.
constexpr std::size_t k_stack_bytes = 512 * 1024;

}  // namespace

Coroutine::Coroutine(std::function<void()> body) : m_body(std::move(body)) {
  std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  m_stack_bytes = k_stack_bytes + page;
  void* stack = ::mmap(nullptr, m_stack_bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return;
  // A stack that overflows faults on its guard page rather than writing
  // over whatever lies below.
  if (::mprotect(stack, page, PROT_NONE) != 0 || ::getcontext(&m_inside) != 0) {
    ::munmap(stack, m_stack_bytes);
    return;
  }
  m_stack = stack;
  m_inside.uc_stack.ss_sp = static_cast<char*>(stack) + page;
  m_inside.uc_stack.ss_size = k_stack_bytes;
  m_inside.uc_link = &m_outside;
  auto self = reinterpret_cast<std::uintptr_t>(this);
  makecontext(&m_inside, reinterpret_cast<void (*)()>(&Coroutine::enter), 2,
              static_cast<unsigned>(self >> 32), static_cast<unsigned>(self & 0xffffffffu));
}

Coroutine::~Coroutine() {
  assert(!m_started || m_ended);
  if (m_stack) ::munmap(m_stack, m_stack_bytes);
}

void Coroutine::enter(unsigned high, unsigned low) {
  auto* self = reinterpret_cast<Coroutine*>((static_cast<std::uintptr_t>(high) << 32) | low);
  self->m_body();
  self->m_ended = true;
  // Returning resumes m_outside (uc_link).
}

void Coroutine::resume() {
  if (!m_stack || m_ended) return;
  m_started = true;
  ::swapcontext(&m_outside, &m_inside);
}

void Coroutine::yield() { ::swapcontext(&m_inside, &m_outside); }

}  // namespace runner
