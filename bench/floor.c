/* The floor under every tool in the bench: a minimal blocking libssh2
 * client that runs one command COUNT times, one after another, over one
 * session (open a channel, exec, read to EOF, close), and prints the
 * milliseconds per run. What is left is sshd forking a shell per command,
 * or, for a command with much output, what libssh2 can receive. The
 * output is discarded, or with OUTPUT written to that file as it arrives
 * (what a client that keeps it must add).
 *
 *   floor HOST PORT USER KEY COUNT COMMAND [OUTPUT]
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <libssh2.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int fail(const char* what, LIBSSH2_SESSION* session) {
  char* message = NULL;
  if (session) libssh2_session_last_error(session, &message, NULL, 0);
  fprintf(stderr, "floor: %s%s%s\n", what, message ? ": " : "", message ? message : "");
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 7 && argc != 8) {
    fprintf(stderr, "usage: floor HOST PORT USER KEY COUNT COMMAND [OUTPUT]\n");
    return 2;
  }
  int output = -1;
  if (argc == 8) {
    output = open(argv[7], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (output < 0) return fail("cannot create the output file", NULL);
  }
  int count = atoi(argv[5]);
  const char* command = argv[6];
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address;
  memset(&address, 0, sizeof address);
  address.sin_family = AF_INET;
  address.sin_port = htons((unsigned short)atoi(argv[2]));
  if (inet_pton(AF_INET, argv[1], &address.sin_addr) != 1) return fail("bad address", NULL);
  if (connect(fd, (struct sockaddr*)&address, sizeof address) != 0) return fail("connect", NULL);
  int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  libssh2_init(0);
  LIBSSH2_SESSION* session = libssh2_session_init();
  if (libssh2_session_handshake(session, fd) != 0) return fail("handshake", session);
  char public_key[4096];
  snprintf(public_key, sizeof public_key, "%s.pub", argv[4]);
  if (libssh2_userauth_publickey_fromfile(session, argv[3], public_key, argv[4], NULL) != 0)
    return fail("authentication", session);
  char buffer[16384];
  double start = now_ms();
  for (int i = 0; i < count; ++i) {
    LIBSSH2_CHANNEL* channel = libssh2_channel_open_session(session);
    if (!channel) return fail("channel open", session);
    if (libssh2_channel_exec(channel, command) != 0) return fail("exec", session);
    ssize_t got;
    while ((got = libssh2_channel_read(channel, buffer, sizeof buffer)) > 0) {
      if (output >= 0 && write(output, buffer, (size_t)got) != got)
        return fail("cannot write the output file", NULL);
    }
    libssh2_channel_close(channel);
    libssh2_channel_wait_closed(channel);
    if (libssh2_channel_get_exit_status(channel) != 0) return fail("the command failed", NULL);
    libssh2_channel_free(channel);
  }
  if (output >= 0 && close(output) != 0) return fail("cannot write the output file", NULL);
  printf("%.3f\n", (now_ms() - start) / count);
  libssh2_session_disconnect(session, "done");
  libssh2_session_free(session);
  close(fd);
  return 0;
}
