/*
 * vtl-tcmu: the kernel side of the appliance's TCMU handler (see docs/fc.md).
 *
 * The Linux target core (LIO) hands every SCSI command for a TCMU backstore to userspace
 * through a UIO device: one shared region holding a mailbox, a command ring and a data area.
 * Node cannot map that region, so this small program does only what needs the mapping: it
 * finds the backstores whose dev_config starts with "vtl/" (sysfs /sys/class/uio/uio* names
 * them "tcm-user/<hba>/<name>/<dev_config>", the same discovery tcmu-runner supports without
 * netlink), opens and maps each, and forwards every command over one stream connection per
 * backstore to the emulator, which runs it on the same SCSI device the iSCSI target uses.
 * Answers come back in order and are completed in the ring in order.
 *
 * Wire format (all integers big-endian), one connection per backstore:
 *   hello    "VTLTCMU1" u16 len, dev_config bytes           (handler -> emulator, once)
 *   command  u32 frame_len, u16 cmd_id, u8 cdb_len, u8 flags (1 = data-out follows),
 *            u32 data_in_len, cdb, data-out                   (handler -> emulator)
 *   answer   u32 frame_len, u16 cmd_id, u8 status, u8 sense_len, u32 data_len, sense, data-in
 *
 * Restart safety: on opening a backstore a previous instance served (a mark in the mailbox's
 * padding says so), it blocks it, resets the ring (the kernel fails every command left
 * unanswered with CHECK CONDITION: nothing a host was told is written is lost silently, and
 * nothing is run twice), and unblocks it. A fresh backstore's queued commands just run.
 * When the emulator's connection drops, the commands in flight fail with HARDWARE ERROR /
 * LOGICAL UNIT COMMUNICATION FAILURE (the host must not retry a tape WRITE blindly) and new
 * ones wait in the ring until the connection is back (the kernel times them out after its
 * cmd_time_out otherwise).
 *
 * Usage: vtl-tcmu IPV4:PORT | unix:PATH   [sysfs root, default /sys]  [configfs root]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/uio.h>
/* linux/uio.h would define struct iovec a second time. */
#define _UAPI__LINUX_UIO_H
#define __LINUX_UIO_H
#include <linux/target_core_user.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEVS 64
#define MAX_INFLIGHT 512
/* A command's iovecs at most (one per data area block it uses, contiguous ones merged): 256 MiB
 * of 4 KiB blocks, more than the kernel's data area gives one command. */
#define TCMU_MAX_IOV 65536
#define PREFIX "vtl/"
/* Where a handler marks a mailbox it serves: the padding after cmd_head (see open_dev). */
#define CLAIM_OFFSET 24
static const char CLAIM[8] = "vtlTCMU";

struct pending {
	uint32_t off;  /* entry offset in the ring */
	uint32_t end;  /* ring offset just past the entry */
	int is_cmd;    /* 0: a PAD or TMR entry that only moves the tail */
	int sent;      /* forwarded to the emulator */
	uint64_t seen_ns, sent_ns; /* timing counters (SIGUSR1 prints them) */
};

/* Where the time of a backstore's commands goes; SIGUSR1 logs and resets them. */
struct stats {
	uint64_t cmds, bytes_in, bytes_out;
	uint64_t wait_ns;    /* ring entry seen -> forwarded (waiting for the connection) */
	uint64_t send_ns;    /* forwarding the CDB and data-out */
	uint64_t service_ns; /* forwarded -> the answer's header arrived (emulator and network) */
	uint64_t recv_ns;    /* the answer's header -> its last byte in the data area */
	uint64_t wakeups;    /* poll wake-ups that found answer bytes */
};

struct dev {
	int used;
	int uio_fd;
	int sock;           /* -1 while disconnected */
	char uio[32];       /* uioN */
	char name[256];     /* configfs backstore name */
	char hba[64];       /* user_N */
	char config[256];   /* dev_config */
	size_t map_size;
	uint8_t *map;
	struct tcmu_mailbox *mb;
	uint32_t next;      /* ring offset of the next entry not yet queued */
	struct pending q[MAX_INFLIGHT];
	unsigned qhead, qlen;
	/* The answer being received: header, sense, then data-in straight into the data area. */
	uint8_t ahdr[12];
	unsigned ahdr_got;
	uint8_t asense[256];
	unsigned asense_got;
	uint32_t adata_got;
	uint64_t ahdr_ns;
	struct stats st;
	time_t retry_at;
	int seen;
};

static struct dev devs[MAX_DEVS];
static const char *endpoint;
static const char *sysfs = "/sys";
static const char *configfs = "/sys/kernel/config";
static volatile sig_atomic_t dump_stats;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void logf_(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "vtl-tcmu: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

static int write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, value, strlen(value));
	close(fd);
	return n < 0 ? -1 : 0;
}

/* Writes every byte of the iovecs (the socket is non-blocking: waits while it is full). */
static int writev_all(int fd, struct iovec *iov, int cnt)
{
	while (cnt > 0) {
		ssize_t n = writev(fd, iov, cnt > IOV_MAX ? IOV_MAX : cnt);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };
			poll(&pfd, 1, 1000);
			continue;
		}
		if (n <= 0)
			return -1;
		while (cnt > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	return writev_all(fd, &iov, 1);
}

static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }
static void put32(uint8_t *p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }

static int dial(void)
{
	int fd;
	if (strncmp(endpoint, "unix:", 5) == 0) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		snprintf(sa.sun_path, sizeof sa.sun_path, "%s", endpoint + 5);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
			goto fail;
		goto connected;
	}
	char host[256];
	snprintf(host, sizeof host, "%s", endpoint);
	char *colon = strrchr(host, ':');
	if (!colon)
		return -1;
	*colon = 0;
	/* A numeric IPv4 address: a static binary has no resolver to lean on. */
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1)) };
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return -1;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		goto fail;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
connected:;
	/* Room for a whole answer (up to a few MiB of data-in) in the socket: with the default, the
	 * window lets a 256 KiB answer in over several round trips. Root may exceed rmem_max. */
	int buf = 4 << 20;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof buf) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
	/* Answers are read until the socket is drained, in one wake-up. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

static void kick(struct dev *d)
{
	uint32_t one = 1;
	if (write(d->uio_fd, &one, 4) < 0)
		logf_("%s: cannot notify the kernel: %s", d->name, strerror(errno));
}

static struct tcmu_cmd_entry *entry_at(struct dev *d, uint32_t off)
{
	return (struct tcmu_cmd_entry *)(d->map + d->mb->cmdr_off + off);
}

/* Moves the tail past every finished entry at the head of the queue. */
static void advance_tail(struct dev *d)
{
	int moved = 0;
	while (d->qlen > 0 && !d->q[d->qhead].is_cmd) {
		__sync_synchronize();
		d->mb->cmd_tail = d->q[d->qhead].end;
		d->qhead = (d->qhead + 1) % MAX_INFLIGHT;
		d->qlen--;
		moved = 1;
	}
	if (moved)
		kick(d);
}

/* Total length of an entry's data area buffers. */
static uint32_t entry_room(const struct tcmu_cmd_entry *e)
{
	uint32_t room = 0;
	for (uint32_t i = 0; i < e->req.iov_cnt; i++)
		room += (uint32_t)e->req.iov[i].iov_len;
	return room;
}

/*
 * Completes the oldest command: status and sense; its data-in (`data_len` bytes) is already in
 * its buffers (read there straight from the socket).
 */
static void complete_head(struct dev *d, uint8_t status, const uint8_t *sense, unsigned sense_len,
			  uint32_t data_len)
{
	struct pending *p = &d->q[d->qhead];
	struct tcmu_cmd_entry *e = entry_at(d, p->off);
	/* The answer overlays the request's fields: read them first. */
	uint32_t room = entry_room(e);
	e->rsp.scsi_status = status;
	memset(e->rsp.sense_buffer, 0, TCMU_SENSE_BUFFERSIZE);
	if (sense_len > TCMU_SENSE_BUFFERSIZE)
		sense_len = TCMU_SENSE_BUFFERSIZE;
	if (sense_len)
		memcpy(e->rsp.sense_buffer, sense, sense_len);
	if (data_len < room && (d->mb->flags & TCMU_MAILBOX_FLAG_CAP_READ_LEN)) {
		e->hdr.uflags |= TCMU_UFLAG_READ_LEN;
		e->rsp.read_len = data_len;
	}
	p->is_cmd = 0;
	advance_tail(d);
}

static void fail_sent(struct dev *d)
{
	/* HARDWARE ERROR, LOGICAL UNIT COMMUNICATION FAILURE: the command may or may not have run. */
	static const uint8_t sense[18] = { 0x70, 0, 0x04, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x08, 0x00 };
	while (d->qlen > 0 && d->q[d->qhead].sent)
		complete_head(d, 2, sense, sizeof sense, 0);
	for (unsigned i = 0; i < d->qlen; i++)
		d->q[(d->qhead + i) % MAX_INFLIGHT].sent = 0;
}

static void disconnect(struct dev *d, const char *why)
{
	if (d->sock >= 0) {
		logf_("%s: emulator connection lost (%s); in-flight commands fail, new ones wait", d->name, why);
		close(d->sock);
	}
	d->sock = -1;
	d->ahdr_got = d->asense_got = d->adata_got = 0;
	fail_sent(d);
	d->retry_at = time(NULL) + 1;
}

/* Opcodes whose buffers carry data to the device (SPC, SSC, SMC; PERSISTENT RESERVE OUT and
 * the SBC writes for completeness: the kernel keeps the former by default). */
static int is_data_out(uint8_t op)
{
	switch (op) {
	case 0x04: /* FORMAT MEDIUM */
	case 0x0a: /* WRITE(6) */
	case 0x15: /* MODE SELECT(6) */
	case 0x1d: /* SEND DIAGNOSTIC */
	case 0x2a: /* WRITE(10) */
	case 0x2e: /* WRITE AND VERIFY(10) */
	case 0x3b: /* WRITE BUFFER */
	case 0x4c: /* LOG SELECT */
	case 0x55: /* MODE SELECT(10) */
	case 0x5f: /* PERSISTENT RESERVE OUT */
	case 0x8a: /* WRITE(16) */
	case 0x8d: /* WRITE ATTRIBUTE */
	case 0xa4: /* MAINTENANCE OUT */
	case 0xaa: /* WRITE(12) */
	case 0xb5: /* SECURITY PROTOCOL OUT */
	case 0xb6: /* SEND VOLUME TAG */
		return 1;
	default:
		return 0;
	}
}

static int send_cmd(struct dev *d, struct pending *p)
{
	struct tcmu_cmd_entry *e = entry_at(d, p->off);
	const uint8_t *cdb = d->map + e->req.cdb_off;
	/* CDB length from the group code, as SAM defines it (VARIABLE LENGTH: 8 + additional). */
	static const uint8_t group_len[8] = { 6, 10, 10, 16, 16, 12, 16, 16 };
	unsigned cdb_len = cdb[0] == 0x7f ? 8u + cdb[7] : group_len[cdb[0] >> 5];
	uint32_t total = 0;
	for (uint32_t i = 0; i < e->req.iov_cnt; i++)
		total += (uint32_t)e->req.iov[i].iov_len;
	/* The entry does not carry the data direction (tcmu-runner decodes the CDB too): the
	 * buffers of a data-out opcode travel, for the rest their length is the host's
	 * allocation. The emulator checks the CDB against what arrived and refuses a mismatch. */
	uint8_t hdr[12];
	int out = total > 0 && is_data_out(cdb[0]);
	put32(hdr, (uint32_t)(8 + cdb_len + (out ? total : 0)));
	put16(hdr + 4, e->hdr.cmd_id);
	hdr[6] = (uint8_t)cdb_len;
	hdr[7] = (uint8_t)out;
	put32(hdr + 8, total);
	/* Header, CDB and data-out in one write: the data leaves the mapping without a copy. */
	static struct iovec iov[2 + TCMU_MAX_IOV];
	int cnt = 0;
	iov[cnt++] = (struct iovec){ .iov_base = hdr, .iov_len = sizeof hdr };
	iov[cnt++] = (struct iovec){ .iov_base = (void *)cdb, .iov_len = cdb_len };
	for (uint32_t i = 0; out && i < e->req.iov_cnt && cnt < 2 + TCMU_MAX_IOV; i++)
		iov[cnt++] = (struct iovec){ .iov_base = d->map + (size_t)e->req.iov[i].iov_base,
					     .iov_len = e->req.iov[i].iov_len };
	uint64_t t0 = now_ns();
	if (writev_all(d->sock, iov, cnt) < 0)
		return -1;
	p->sent = 1;
	p->sent_ns = now_ns();
	d->st.send_ns += p->sent_ns - t0;
	d->st.wait_ns += t0 - p->seen_ns;
	d->st.bytes_out += out ? total : 0;
	return 0;
}

static void flush_unsent(struct dev *d)
{
	for (unsigned i = 0; i < d->qlen && d->sock >= 0; i++) {
		struct pending *p = &d->q[(d->qhead + i) % MAX_INFLIGHT];
		if (p->is_cmd && !p->sent && send_cmd(d, p) < 0)
			disconnect(d, "write failed");
	}
}

static void try_connect(struct dev *d)
{
	if (d->sock >= 0 || time(NULL) < d->retry_at)
		return;
	int fd = dial();
	if (fd < 0) {
		d->retry_at = time(NULL) + 1;
		return;
	}
	size_t n = strlen(d->config);
	uint8_t hello[8 + 2 + 256];
	memcpy(hello, "VTLTCMU1", 8);
	put16(hello + 8, (uint16_t)n);
	memcpy(hello + 10, d->config, n);
	if (write_all(fd, hello, 10 + n) < 0) {
		close(fd);
		d->retry_at = time(NULL) + 1;
		return;
	}
	d->sock = fd;
	logf_("%s: connected to the emulator for %s", d->name, d->config);
	flush_unsent(d);
}

/* Queues every ring entry the kernel added since the last look. */
static void take_ring(struct dev *d)
{
	uint32_t head = d->mb->cmd_head;
	__sync_synchronize();
	while (d->next != head) {
		if (d->qlen == MAX_INFLIGHT)
			return;
		struct tcmu_cmd_entry *e = entry_at(d, d->next);
		uint32_t len = tcmu_hdr_get_len(e->hdr.len_op);
		struct pending *p = &d->q[(d->qhead + d->qlen) % MAX_INFLIGHT];
		p->off = d->next;
		p->end = (d->next + len) % d->mb->cmdr_size;
		p->is_cmd = tcmu_hdr_get_op(e->hdr.len_op) == TCMU_OP_CMD;
		p->sent = 0;
		p->seen_ns = now_ns();
		d->qlen++;
		d->next = p->end;
		if (p->is_cmd && d->sock >= 0 && send_cmd(d, p) < 0)
			disconnect(d, "write failed");
	}
	advance_tail(d);
}

/* Reads into buf; 1 when all `want` bytes are there, 0 when the socket is drained, -1 closed. */
static int read_some(struct dev *d, void *buf, size_t want, size_t *got)
{
	while (*got < want) {
		ssize_t n = read(d->sock, (uint8_t *)buf + *got, want - *got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0) {
			disconnect(d, n == 0 ? "closed" : strerror(errno));
			return -1;
		}
		*got += (size_t)n;
	}
	return 1;
}

/*
 * Reads answers until the socket is drained. Each answer's data-in goes straight from the socket
 * into the head command's buffers in the data area (answers come in ring order), so the only
 * copies are the kernel's: socket to mapping, mapping to the host's buffer.
 */
static void read_answers(struct dev *d)
{
	static uint8_t discard[65536];
	d->st.wakeups++;
	while (d->sock >= 0) {
		size_t got = d->ahdr_got;
		int r = read_some(d, d->ahdr, sizeof d->ahdr, &got);
		if (r < 0)
			return; /* disconnected: the state is reset */
		d->ahdr_got = (unsigned)got;
		if (r == 0)
			return;
		uint32_t flen = get32(d->ahdr);
		uint16_t id = get16(d->ahdr + 4);
		uint8_t status = d->ahdr[6], sense_len = d->ahdr[7];
		uint32_t data_len = get32(d->ahdr + 8);
		if (d->asense_got == 0 && d->adata_got == 0) {
			if (d->ahdr_ns == 0)
				d->ahdr_ns = now_ns();
			if (flen != 8u + sense_len + data_len) {
				disconnect(d, "malformed answer");
				return;
			}
			if (d->qlen == 0 || !d->q[d->qhead].is_cmd ||
			    entry_at(d, d->q[d->qhead].off)->hdr.cmd_id != id) {
				disconnect(d, "answer out of order");
				return;
			}
		}
		got = d->asense_got;
		r = read_some(d, d->asense, sense_len, &got);
		if (r < 0)
			return;
		d->asense_got = (unsigned)got;
		if (r == 0)
			return;
		struct tcmu_cmd_entry *e = entry_at(d, d->q[d->qhead].off);
		uint32_t room = entry_room(e);
		while (d->adata_got < data_len) {
			/* The part that fits the host's buffers goes into them, the rest (never, unless the
			 * emulator answers more than asked) is read and dropped. */
			static struct iovec iov[IOV_MAX];
			int cnt = 0;
			uint32_t skip = d->adata_got, left = data_len - d->adata_got;
			for (uint32_t i = 0; i < e->req.iov_cnt && cnt < IOV_MAX && left > 0; i++) {
				uint32_t len = (uint32_t)e->req.iov[i].iov_len;
				if (skip >= len) {
					skip -= len;
					continue;
				}
				uint32_t n = len - skip < left ? len - skip : left;
				iov[cnt++] = (struct iovec){ .iov_base = d->map + (size_t)e->req.iov[i].iov_base + skip,
							     .iov_len = n };
				left -= n;
				skip = 0;
			}
			if (cnt == 0)
				iov[cnt++] = (struct iovec){ .iov_base = discard,
							     .iov_len = left < sizeof discard ? left : sizeof discard };
			ssize_t n = readv(d->sock, iov, cnt);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno == EAGAIN)
				return;
			if (n <= 0) {
				disconnect(d, n == 0 ? "closed" : strerror(errno));
				return;
			}
			d->adata_got += (uint32_t)n;
		}
		uint64_t t = now_ns();
		struct pending *p = &d->q[d->qhead];
		d->st.cmds++;
		d->st.bytes_in += data_len;
		d->st.service_ns += d->ahdr_ns - p->sent_ns;
		d->st.recv_ns += t - d->ahdr_ns;
		complete_head(d, status, d->asense, sense_len, data_len < room ? data_len : room);
		d->ahdr_got = d->asense_got = d->adata_got = 0;
		d->ahdr_ns = 0;
	}
}

static void log_stats(struct dev *d)
{
	struct stats *s = &d->st;
	uint64_t n = s->cmds ? s->cmds : 1;
	logf_("%s: stats cmds=%llu in=%llu out=%llu wakeups=%llu avg-us wait=%llu send=%llu service=%llu recv=%llu",
	      d->name, (unsigned long long)s->cmds, (unsigned long long)s->bytes_in,
	      (unsigned long long)s->bytes_out, (unsigned long long)s->wakeups,
	      (unsigned long long)(s->wait_ns / n / 1000), (unsigned long long)(s->send_ns / n / 1000),
	      (unsigned long long)(s->service_ns / n / 1000), (unsigned long long)(s->recv_ns / n / 1000));
	memset(s, 0, sizeof *s);
}

static void close_dev(struct dev *d)
{
	logf_("%s: backstore gone", d->name);
	if (d->sock >= 0)
		close(d->sock);
	munmap(d->map, d->map_size);
	close(d->uio_fd);
	memset(d, 0, sizeof *d);
}

static void action(struct dev *d, const char *what, const char *value)
{
	char path[512];
	snprintf(path, sizeof path, "%s/target/core/%s/%s/action/%s", configfs, d->hba, d->name, what);
	if (write_file(path, value) < 0)
		logf_("%s: %s=%s failed: %s", d->name, what, value, strerror(errno));
}

static void open_dev(const char *uio, const char *name)
{
	/* name: tcm-user/<hba number>/<backstore>/<dev_config> */
	char copy[512];
	snprintf(copy, sizeof copy, "%s", name);
	char *hba = copy + strlen("tcm-user/");
	char *bs = strchr(hba, '/');
	if (!bs)
		return;
	*bs++ = 0;
	char *cfg = strchr(bs, '/');
	if (!cfg)
		return;
	*cfg++ = 0;
	if (strncmp(cfg, PREFIX, strlen(PREFIX)) != 0)
		return;
	struct dev *d = NULL;
	for (int i = 0; i < MAX_DEVS && !d; i++)
		if (!devs[i].used)
			d = &devs[i];
	if (!d) {
		logf_("too many backstores, %s not served", bs);
		return;
	}
	char path[512], size[64];
	snprintf(path, sizeof path, "%s/class/uio/%s/maps/map0/size", sysfs, uio);
	if (read_file(path, size, sizeof size) < 0)
		return;
	snprintf(path, sizeof path, "/dev/%s", uio);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		logf_("%s: cannot open %s: %s", bs, path, strerror(errno));
		return;
	}
	size_t len = strtoul(size, NULL, 0);
	void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		logf_("%s: cannot map %s: %s", bs, path, strerror(errno));
		close(fd);
		return;
	}
	memset(d, 0, sizeof *d);
	d->used = 1;
	d->uio_fd = fd;
	d->sock = -1;
	d->map = map;
	d->map_size = len;
	d->mb = map;
	snprintf(d->uio, sizeof d->uio, "%s", uio);
	snprintf(d->name, sizeof d->name, "%s", bs);
	snprintf(d->hba, sizeof d->hba, "user_%s", hba);
	snprintf(d->config, sizeof d->config, "%s", cfg);
	/*
	 * A mailbox is zeroed when the kernel creates the backstore, and its bytes between
	 * cmd_head and cmd_tail (their own cache lines) are nobody's: the mark below says a handler
	 * has served this very backstore. Marked: a previous instance died with commands it may
	 * have forwarded, so the kernel fails them (CHECK CONDITION), never run twice. Unmarked:
	 * what is queued (the host's first INQUIRY during its scan) was never seen, and runs.
	 */
	char *mark = (char *)map + CLAIM_OFFSET;
	if (memcmp(mark, CLAIM, sizeof CLAIM) == 0) {
		action(d, "block_dev", "1");
		action(d, "reset_ring", "2");
		action(d, "block_dev", "0");
		logf_("%s: a previous handler served it: its unanswered commands were failed", bs);
	}
	memcpy(mark, CLAIM, sizeof CLAIM);
	d->next = d->mb->cmd_tail;
	logf_("%s: serving %s (%s, ring %u bytes, map %zu bytes, flags 0x%x)", d->name, d->config, uio,
	      d->mb->cmdr_size, len, d->mb->flags);
	try_connect(d);
	take_ring(d);
}

static void scan(void)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s/class/uio", sysfs);
	for (int i = 0; i < MAX_DEVS; i++)
		devs[i].seen = 0;
	DIR *dh = opendir(dir);
	struct dirent *de;
	while (dh && (de = readdir(dh))) {
		if (strncmp(de->d_name, "uio", 3) != 0)
			continue;
		char path[768], name[512];
		snprintf(path, sizeof path, "%s/%s/name", dir, de->d_name);
		if (read_file(path, name, sizeof name) < 0 || strncmp(name, "tcm-user/", 9) != 0)
			continue;
		int known = 0;
		for (int i = 0; i < MAX_DEVS; i++)
			if (devs[i].used && strcmp(devs[i].uio, de->d_name) == 0)
				known = devs[i].seen = 1;
		if (!known)
			open_dev(de->d_name, name);
	}
	if (dh)
		closedir(dh);
	for (int i = 0; i < MAX_DEVS; i++)
		if (devs[i].used && !devs[i].seen) {
			/* A backstore just opened in this scan is marked seen by the next one. */
			char path[512];
			snprintf(path, sizeof path, "%s/class/uio/%s", sysfs, devs[i].uio);
			if (access(path, F_OK) != 0)
				close_dev(&devs[i]);
		}
}

static void on_usr1(int sig)
{
	(void)sig;
	dump_stats = 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: vtl-tcmu HOST:PORT|unix:PATH [SYSFS_ROOT] [CONFIGFS_ROOT]\n");
		return 2;
	}
	endpoint = argv[1];
	if (argc > 2)
		sysfs = argv[2];
	if (argc > 3)
		configfs = argv[3];
	signal(SIGPIPE, SIG_IGN);
	/* SIGUSR1: log each backstore's timing counters and reset them (docs/fc.md, throughput). */
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigaction(SIGUSR1, &sa, NULL);
	setvbuf(stderr, NULL, _IOLBF, 0);
	logf_("started, emulator at %s", endpoint);
	time_t next_scan = 0;
	for (;;) {
		if (time(NULL) >= next_scan) {
			scan();
			next_scan = time(NULL) + 1;
		}
		struct pollfd pfd[2 * MAX_DEVS];
		struct dev *owner[2 * MAX_DEVS];
		int n = 0;
		for (int i = 0; i < MAX_DEVS; i++) {
			struct dev *d = &devs[i];
			if (!d->used)
				continue;
			try_connect(d);
			pfd[n] = (struct pollfd){ .fd = d->uio_fd, .events = POLLIN };
			owner[n++] = d;
			if (d->sock >= 0) {
				pfd[n] = (struct pollfd){ .fd = d->sock, .events = POLLIN };
				owner[n++] = d;
			}
		}
		if (dump_stats) {
			dump_stats = 0;
			for (int i = 0; i < MAX_DEVS; i++)
				if (devs[i].used)
					log_stats(&devs[i]);
		}
		int r = poll(pfd, (nfds_t)n, 250);
		if (r < 0 && errno != EINTR) {
			logf_("poll: %s", strerror(errno));
			return 1;
		}
		for (int i = 0; i < n && r > 0; i++) {
			struct dev *d = owner[i];
			if (!d->used || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (pfd[i].fd == d->uio_fd) {
				uint32_t count;
				if (read(d->uio_fd, &count, 4) < 0 && errno != EAGAIN)
					logf_("%s: uio read: %s", d->name, strerror(errno));
				take_ring(d);
			} else if (pfd[i].fd == d->sock) {
				read_answers(d);
			}
		}
		/* Entries may arrive without an interrupt we saw (e.g. while connecting). */
		for (int i = 0; i < MAX_DEVS; i++)
			if (devs[i].used)
				take_ring(&devs[i]);
	}
}
