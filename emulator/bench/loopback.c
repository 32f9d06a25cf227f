/*
 * The transport's ceiling on this machine: how fast bare TCP over loopback moves a stream, with
 * no iSCSI and no disk. A sender process writes `--bytes` in `--block` writes; this process
 * receives them into one buffer and drops them. Every iSCSI target on this machine pays at least
 * this (the sender's copy into the socket, TCP on both ends, the receiver's copy out) on the
 * same cores as its initiator, before it touches the disk.
 *
 * Prints one JSON line in the shape of the benchmark's RunResult: the span from the first byte
 * received to the last (the initiators' spans also leave out their connection set-up), the CPU
 * of both processes, and CLOCK_MONOTONIC stamps (process.hrtime's clock) so the benchmark can
 * join streams run at once.
 *
 *   cc -O2 -o loopback loopback.c && ./loopback --bytes 1073741824 --block 1048576
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what) {
  perror(what);
  exit(1);
}

static uint64_t monotonic_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static double seconds(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec / 1e6; }

static void send_all(int sock, long long bytes, size_t block) {
  char *buf = malloc(block);
  if (!buf) die("malloc");
  memset(buf, 0x5a, block);
  for (long long sent = 0; sent < bytes;) {
    size_t n = bytes - sent < (long long)block ? (size_t)(bytes - sent) : block;
    ssize_t w = write(sock, buf, n);
    if (w <= 0) die("write");
    sent += w;
  }
  /* Wait for the receiver's word that it has everything, so its span is what is measured. */
  char done;
  if (read(sock, &done, 1) != 1) die("read");
}

int main(int argc, char **argv) {
  long long bytes = 0;
  size_t block = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--bytes") == 0) bytes = atoll(argv[i + 1]);
    else if (strcmp(argv[i], "--block") == 0) block = (size_t)atoll(argv[i + 1]);
  }
  if (bytes <= 0 || block == 0) {
    fprintf(stderr, "usage: %s --bytes N --block N\n", argv[0]);
    return 2;
  }
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof addr;
  if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(listener, 1) < 0 ||
      getsockname(listener, (struct sockaddr *)&addr, &len) < 0)
    die("listen");
  pid_t sender = fork();
  if (sender < 0) die("fork");
  if (sender == 0) {
    int sock = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    if (sock < 0 || connect(sock, (struct sockaddr *)&addr, sizeof addr) < 0) die("connect");
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    send_all(sock, bytes, block);
    _exit(0);
  }
  int sock = accept(listener, NULL, NULL);
  if (sock < 0) die("accept");
  char *buf = malloc(block);
  if (!buf) die("malloc");
  uint64_t start = 0;
  for (long long got = 0; got < bytes;) {
    ssize_t n = recv(sock, buf, block, MSG_WAITALL);
    if (n <= 0) die("recv");
    if (start == 0) start = monotonic_ns();
    got += n;
  }
  uint64_t end = monotonic_ns();
  if (write(sock, "k", 1) != 1) die("write");
  int status;
  if (waitpid(sender, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "the sender failed\n");
    return 1;
  }
  struct rusage self, child;
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &child);
  double system = seconds(self.ru_stime) + seconds(child.ru_stime);
  double cpu = system + seconds(self.ru_utime) + seconds(child.ru_utime);
  printf("{\"bytes\":%lld,\"seconds\":%.6f,\"cpuSeconds\":%.6f,\"systemSeconds\":%.6f,"
         "\"startNs\":\"%llu\",\"endNs\":\"%llu\"}\n",
         bytes, (double)(end - start) / 1e9, cpu, system, (unsigned long long)start,
         (unsigned long long)end);
  return 0;
}
