/*
 * Off-CPU test workload.
 *
 *   workload [seconds=1] [slice_ms=10] [mode=libc|raw] [sleeper]
 *
 * The main thread loops until `seconds` of wall time have passed; each round:
 *   burn()       spins on the CPU for slice_ms              (~1/3 of wall time)
 *   doze()       sleeps slice_ms in nanosleep               (~1/3, off CPU)
 *   wait_pipe()  blocks in read() on a pipe that a feeder    (~1/3, off CPU)
 *                thread writes slice_ms after being asked
 *
 * doze()/wait_pipe() do the syscall through a small frame-pointer helper
 * (sleep_call()/read_call()) so that a frame-pointer unwind from the libc
 * syscall wrapper (which has no frame of its own) still names doze/wait_pipe:
 * the caller of a frameless leaf is always the frame that gets skipped.
 * With mode=raw the helpers issue the syscall instruction themselves, so the
 * user ip at switch-out lies in sleep_call/read_call (exact chain).
 *
 * With "sleeper", a third thread ("sleeper") blocks in read() on a pipe
 * nothing writes until the main loop ends: off CPU all the time.
 *
 * Build: gcc -O1 -fno-omit-frame-pointer -g -fno-inline -pthread workload.c -o workload
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long slice_ns = 10 * 1000000L;
static int raw_mode;
static int req_pipe[2], resp_pipe[2];
static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static long raw_syscall3(long nr, long a, long b, long c)
{
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline)) void sleep_call(const struct timespec *ts)
{
	if (raw_mode)
		raw_syscall3(SYS_nanosleep, (long)ts, 0, 0);
	else
		nanosleep(ts, NULL);
}

__attribute__((noinline)) long read_call(int fd, void *buf, size_t n)
{
	if (raw_mode)
		return raw_syscall3(SYS_read, fd, (long)buf, (long)n);
	return read(fd, buf, n);
}

__attribute__((noinline)) void burn(void)
{
	uint64_t end = now_ns() + slice_ns;
	uint64_t x = sink;
	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

__attribute__((noinline)) void doze(void)
{
	struct timespec ts = { slice_ns / 1000000000L, slice_ns % 1000000000L };
	sleep_call(&ts);
}

__attribute__((noinline)) void wait_pipe(void)
{
	char c = 'r';
	if (write(req_pipe[1], &c, 1) != 1)
		abort();
	if (read_call(resp_pipe[0], &c, 1) != 1)
		abort();
}

static void *feeder(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "feeder");
	char c;
	while (read(req_pipe[0], &c, 1) == 1) {
		if (c == 'q')
			break;
		struct timespec ts = { slice_ns / 1000000000L, slice_ns % 1000000000L };
		nanosleep(&ts, NULL);
		if (write(resp_pipe[1], &c, 1) != 1)
			abort();
	}
	return NULL;
}

static int sleep_pipe[2];

static void *sleeper(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	char c;
	if (read(sleep_pipe[0], &c, 1) != 1)
		abort();
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	if (argc > 2)
		slice_ns = (long)(atof(argv[2]) * 1e6);
	raw_mode = argc > 3 && !strcmp(argv[3], "raw");

	if (pipe(req_pipe) || pipe(resp_pipe))
		return 1;
	pthread_t th, sl;
	pthread_create(&th, NULL, feeder, NULL);
	int with_sleeper = argc > 4 && !strcmp(argv[4], "sleeper");
	if (with_sleeper && (pipe(sleep_pipe) || pthread_create(&sl, NULL, sleeper, NULL)))
		return 1;

	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(secs * 1e9);
	uint64_t t_burn = 0, t_doze = 0, t_wait = 0;
	int rounds = 0;
	while (now_ns() < end) {
		uint64_t a = now_ns();
		burn();
		uint64_t b = now_ns();
		doze();
		uint64_t c = now_ns();
		wait_pipe();
		uint64_t d = now_ns();
		t_burn += b - a;
		t_doze += c - b;
		t_wait += d - c;
		rounds++;
	}
	char q = 'q';
	if (write(req_pipe[1], &q, 1) != 1)
		return 1;
	pthread_join(th, NULL);
	if (with_sleeper) {
		if (write(sleep_pipe[1], &q, 1) != 1)
			return 1;
		pthread_join(sl, NULL);
	}
	uint64_t tot = now_ns() - t0;
	fprintf(stderr,
		"workload: pid %d rounds %d wall %.3f ms burn %.3f ms (%.1f%%) doze %.3f ms (%.1f%%) wait_pipe %.3f ms (%.1f%%)\n",
		getpid(), rounds, tot / 1e6, t_burn / 1e6, 100.0 * t_burn / tot,
		t_doze / 1e6, 100.0 * t_doze / tot, t_wait / 1e6, 100.0 * t_wait / tot);
	return 0;
}
