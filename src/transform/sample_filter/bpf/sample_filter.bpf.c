// SPDX-License-Identifier: MIT OR Apache-2.0
//
// perfz's in-kernel sample filter: a BPF_PROG_TYPE_PERF_EVENT program
// attached to every fd of a filtered event (PERF_EVENT_IOC_SET_BPF). The
// kernel runs it at each overflow; it returns 1 to write the sample into
// the ring, 0 to drop it (and counts the drop). The filter itself is data:
// the `filter` map holds a list of entries (a comparison, or a group
// marker), so this one object serves every filter (kernel/mod.rs fills it).
// It reads only what needs no CO-RE: the ctx (ip, period, addr) and helpers
// (cpu, pid/tid, uid/gid, cgroup); a filter on any other field runs in the
// push path (src/transform/sample_filter/kernel/mod.rs says which).
//
// Self-contained (no libbpf headers): build with build.sh beside it,
//   clang-14 -target bpf -O2 -g -c sample_filter.bpf.c -o sample_filter.bpf.o
// The entry layout and the codes below are mirrored in kernel/entries.rs.

typedef unsigned int __u32;
typedef unsigned long long __u64;

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name

/* The helpers used, by their numbers in uapi linux/bpf.h. */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static __u64 (*bpf_get_current_uid_gid)(void) = (void *)15;
static __u32 (*bpf_get_smp_processor_id)(void) = (void *)8;
static __u64 (*bpf_get_current_cgroup_id)(void) = (void *)80;
static long (*bpf_loop)(__u32 nr_loops, void *callback, void *ctx, __u64 flags) = (void *)181;

#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_PERCPU_ARRAY 6

#define MAX_ENTRIES 64

/* Operations: perf's enum perf_bpf_filter_op, in its order. */
enum op {
	OP_EQ,
	OP_NE,
	OP_GT,
	OP_GE,
	OP_LT,
	OP_LE,
	OP_AND,
	OP_GROUP_BEGIN,
	OP_GROUP_END,
	OP_DONE,
};

/* What an entry compares. */
enum term {
	TERM_NONE,
	TERM_IP,
	TERM_TID,
	TERM_PID,
	TERM_CPU,
	TERM_PERIOD,
	TERM_ADDR,
	TERM_UID,
	TERM_GID,
	TERM_CGROUP,
};

struct entry {
	__u32 op;
	__u32 term;
	__u64 value;
};

struct filter {
	struct entry entries[MAX_ENTRIES];
};

/* The filter, written once before the event is enabled. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct filter);
	__uint(max_entries, 1);
} filter SEC(".maps");

/* Samples dropped, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} dropped SEC(".maps");

/* What an overflow's sample says, as far as needed. */
struct sample {
	__u64 ip, period, addr;
};

static __attribute__((always_inline)) __u64 value_of(__u32 term, const struct sample *s)
{
	switch (term) {
	case TERM_IP:
		return s->ip;
	case TERM_TID:
		return bpf_get_current_pid_tgid() & 0xffffffff;
	case TERM_PID:
		return bpf_get_current_pid_tgid() >> 32;
	case TERM_CPU:
		return bpf_get_smp_processor_id();
	case TERM_PERIOD:
		return s->period;
	case TERM_ADDR:
		return s->addr;
	case TERM_UID:
		return bpf_get_current_uid_gid() & 0xffffffff;
	case TERM_GID:
		return bpf_get_current_uid_gid() >> 32;
	case TERM_CGROUP:
		return bpf_get_current_cgroup_id();
	}
	return 0;
}

static __attribute__((always_inline)) int holds(__u32 op, __u64 v, __u64 to)
{
	switch (op) {
	case OP_EQ:
		return v == to;
	case OP_NE:
		return v != to;
	case OP_GT:
		return v > to;
	case OP_GE:
		return v >= to;
	case OP_LT:
		return v < to;
	case OP_LE:
		return v <= to;
	case OP_AND:
		return (v & to) != 0;
	}
	return 0;
}

/* Where a walk over the entries stands: bpf_loop calls step() once per
 * entry with it. */
struct walk {
	struct sample s;
	struct filter *f;
	int in_group, group_holds;
	/* 1: keep the sample; 0: drop it. */
	int keep;
};

/* One entry. A group (GROUP_BEGIN .. GROUP_END) holds where one of its
 * comparisons does; every comparison outside a group, and every group,
 * must hold. Returns 1 to stop the walk. */
static long step(__u64 i, struct walk *w)
{
	struct entry *e;

	if (i >= MAX_ENTRIES)
		return 1;
	e = &w->f->entries[i];
	if (e->op == OP_DONE)
		return 1;
	if (e->op == OP_GROUP_BEGIN) {
		w->in_group = 1;
		w->group_holds = 0;
		return 0;
	}
	if (e->op == OP_GROUP_END) {
		w->in_group = 0;
		w->keep = w->group_holds;
		return !w->keep;
	}
	if (holds(e->op, value_of(e->term, &w->s), e->value))
		w->group_holds = 1;
	else if (!w->in_group)
		w->keep = 0;
	return !w->keep;
}

/* 1: keep the sample; 0: drop it. The entries are walked with bpf_loop
 * (kernel 5.17+): the verifier checks step() once, not once an entry. */
static __attribute__((always_inline)) int keeps(const struct sample *s)
{
	__u32 zero = 0;
	struct walk w = { .s = *s, .keep = 1 };

	w.f = bpf_map_lookup_elem(&filter, &zero);
	if (!w.f)
		return 1;
	bpf_loop(MAX_ENTRIES, step, &w, 0);
	return w.keep;
}

static __attribute__((always_inline)) int count(int keep)
{
	__u32 zero = 0;
	__u64 *n;

	if (keep)
		return 1;
	n = bpf_map_lookup_elem(&dropped, &zero);
	if (n)
		*n += 1;
	return 0;
}

/* The ctx (struct bpf_perf_event_data) differs by architecture only in
 * its registers (bpf_user_pt_regs_t): one program per architecture, the
 * loader takes the one built for its own. */

/* x86_64: struct pt_regs, 21 words, ip the 17th. */
struct ctx_x86_64 {
	__u64 regs[21];
	__u64 sample_period;
	__u64 addr;
};

SEC("perf_event")
int sample_filter_x86_64(struct ctx_x86_64 *ctx)
{
	struct sample s = { ctx->regs[16], ctx->sample_period, ctx->addr };

	return count(keeps(&s));
}

/* aarch64: struct user_pt_regs, regs[31], sp, pc, pstate. */
struct ctx_aarch64 {
	__u64 regs[34];
	__u64 sample_period;
	__u64 addr;
};

SEC("perf_event")
int sample_filter_aarch64(struct ctx_aarch64 *ctx)
{
	struct sample s = { ctx->regs[32], ctx->sample_period, ctx->addr };

	return count(keeps(&s));
}

char LICENSE[] SEC("license") = "GPL";
