// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: per-CPU compression streams over the kernel's compression API.
 *
 * Each initialised device has one stream per online CPU, set up when the
 * CPU comes up (CPU hotplug prepare state) and freed when it is dead, so
 * the I/O path never allocates. A stream is taken with hzram_strm_get(),
 * which locks the current CPU's stream with preemption off: the holder
 * may not sleep, and its CPU cannot go down meanwhile.
 */
#include "hzram.h"

#include <linux/cpuhotplug.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

/*
 * The algorithms hzram accepts, when the kernel provides them. Each keeps
 * its compression and decompression state apart (see struct hzram_strm).
 */
static const char * const hzram_algs[] = {
	"lzo", "lzo-rle", "lz4", "lz4hc", "zstd",
};

static enum cpuhp_state hzram_cpuhp_state;

bool hzram_comp_available(const char *name)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(hzram_algs); i++)
		if (!strcmp(name, hzram_algs[i]))
			return crypto_has_comp(name, 0, 0) == 1;
	return false;
}

/**
 * hzram_comp_available_show() - list the algorithms for comp_algorithm
 * @cur: the selected algorithm, printed in brackets
 * @buf: sysfs buffer (PAGE_SIZE)
 *
 * Return: the number of bytes written.
 */
ssize_t hzram_comp_available_show(const char *cur, char *buf)
{
	ssize_t sz = 0;
	int i;

	for (i = 0; i < ARRAY_SIZE(hzram_algs); i++) {
		const char *alg = hzram_algs[i];

		if (!strcmp(cur, alg))
			sz += sysfs_emit_at(buf, sz, "[%s] ", alg);
		else if (hzram_comp_available(alg))
			sz += sysfs_emit_at(buf, sz, "%s ", alg);
	}
	if (sz)
		buf[sz - 1] = '\n';
	return sz;
}

/* What a stream owns. */
struct hzram_strm_mem {
	struct crypto_comp *tfm;
	void *buffer;
	void *scratch;
};

static void hzram_strm_mem_free(struct hzram_strm_mem *m)
{
	if (!IS_ERR_OR_NULL(m->tfm))
		crypto_free_comp(m->tfm);
	free_page((unsigned long)m->scratch);
	vfree(m->buffer);
}

static int hzram_strm_mem_alloc(struct hzram_strm_mem *m, const char *name,
				int node)
{
	struct page *page;
	int ret = 0;

	m->tfm = crypto_alloc_comp(name, 0, 0);
	/* The compressor's output may exceed a page before it gives up. */
	m->buffer = vzalloc_node(2 * PAGE_SIZE, node);
	page = alloc_pages_node(node, GFP_KERNEL, 0);
	m->scratch = page ? page_address(page) : NULL;
	if (IS_ERR(m->tfm))
		ret = PTR_ERR(m->tfm);
	else if (!m->buffer || !m->scratch)
		ret = -ENOMEM;
	if (ret)
		hzram_strm_mem_free(m);
	return ret;
}

/*
 * A CPU is coming up: give it a stream. Nothing uses it before the CPU is
 * online, and only that CPU's tasks use it after.
 */
static int hzram_comp_cpu_prepare(unsigned int cpu, struct hlist_node *node)
{
	struct hzram_comp *comp = hlist_entry(node, struct hzram_comp, node);
	struct hzram_strm *strm = per_cpu_ptr(comp->strm, cpu);
	struct hzram_strm_mem new;
	int ret;

	ret = hzram_strm_mem_alloc(&new, comp->name, cpu_to_node(cpu));
	if (ret) {
		pr_err("cannot set up a %s stream for CPU %u: %d\n", comp->name,
		       cpu, ret);
		return ret;
	}
	strm->tfm = new.tfm;
	strm->buffer = new.buffer;
	strm->scratch = new.scratch;
	return 0;
}

/*
 * @cpu is dead: nothing holds its stream (a holder keeps preemption off,
 * and a CPU goes down only after it stopped running tasks).
 */
static int hzram_comp_cpu_dead(unsigned int cpu, struct hlist_node *node)
{
	struct hzram_comp *comp = hlist_entry(node, struct hzram_comp, node);
	struct hzram_strm *strm = per_cpu_ptr(comp->strm, cpu);
	struct hzram_strm_mem old = {
		.tfm = strm->tfm,
		.buffer = strm->buffer,
		.scratch = strm->scratch,
	};

	strm->tfm = NULL;
	strm->buffer = NULL;
	strm->scratch = NULL;
	hzram_strm_mem_free(&old);
	return 0;
}

/**
 * hzram_comp_create() - set up streams of algorithm @name on every CPU
 * @name: a compression algorithm of the crypto API
 *
 * Return: the streams, or an ERR_PTR (-ENOMEM, -EINVAL for an unknown
 * algorithm).
 */
struct hzram_comp *hzram_comp_create(const char *name)
{
	struct hzram_comp *comp;
	int cpu, ret;

	if (!hzram_comp_available(name))
		return ERR_PTR(-EINVAL);
	comp = kzalloc(sizeof(*comp), GFP_KERNEL);
	if (!comp)
		return ERR_PTR(-ENOMEM);
	strscpy(comp->name, name, sizeof(comp->name));
	comp->strm = alloc_percpu(struct hzram_strm);
	if (!comp->strm) {
		ret = -ENOMEM;
		goto err_free_comp;
	}
	for_each_possible_cpu(cpu) {
		local_lock_init(&per_cpu_ptr(comp->strm, cpu)->lock);
		local_lock_init(&per_cpu_ptr(comp->strm, cpu)->dlock);
	}

	ret = cpuhp_state_add_instance(hzram_cpuhp_state, &comp->node);
	if (ret)
		goto err_free_percpu;
	return comp;

err_free_percpu:
	free_percpu(comp->strm);
err_free_comp:
	kfree(comp);
	return ERR_PTR(ret);
}

void hzram_comp_destroy(struct hzram_comp *comp)
{
	cpuhp_state_remove_instance(hzram_cpuhp_state, &comp->node);
	free_percpu(comp->strm);
	kfree(comp);
}

/**
 * hzram_strm_get() - lock and return the current CPU's stream
 * @comp: the device's streams
 *
 * Preemption is off until hzram_strm_put(): the caller must not sleep.
 */
struct hzram_strm *hzram_strm_get(struct hzram_comp *comp)
{
	local_lock(&comp->strm->lock);
	return this_cpu_ptr(comp->strm);
}

void hzram_strm_put(struct hzram_comp *comp)
{
	local_unlock(&comp->strm->lock);
}

/**
 * hzram_comp_compress() - compress one page into the stream's buffer
 * @strm: a stream held by the caller
 * @src: PAGE_SIZE bytes
 * @dst_len: set to the compressed length, at most 2 * PAGE_SIZE
 *
 * Return: 0 or a negative errno.
 */
int hzram_comp_compress(struct hzram_strm *strm, const void *src,
			unsigned int *dst_len)
{
	*dst_len = 2 * PAGE_SIZE;
	if (hzram_fail_compress())
		return -EIO;
	return crypto_comp_compress(strm->tfm, src, PAGE_SIZE, strm->buffer,
				    dst_len);
}

/**
 * hzram_comp_decompress() - decompress one page on the current CPU
 * @comp: the device's streams
 * @src: the compressed data
 * @src_len: its length in bytes
 * @dst: PAGE_SIZE bytes of output
 *
 * Does not sleep and needs no stream held; a caller holding one may call
 * it too.
 *
 * Return: 0, or -EIO if @src is not a valid compressed page.
 */
int hzram_comp_decompress(struct hzram_comp *comp, const void *src,
			  unsigned int src_len, void *dst)
{
	unsigned int dst_len = PAGE_SIZE;
	int ret;

	if (hzram_fail_decompress())
		return -EIO;
	local_lock(&comp->strm->dlock);
	ret = crypto_comp_decompress(this_cpu_ptr(comp->strm)->tfm, src,
				     src_len, dst, &dst_len);
	local_unlock(&comp->strm->dlock);
	if (ret || dst_len != PAGE_SIZE)
		return -EIO;
	return 0;
}

int hzram_comp_init(void)
{
	int ret;

	ret = cpuhp_setup_state_multi(CPUHP_BP_PREPARE_DYN, "block/hzram:prepare",
				      hzram_comp_cpu_prepare,
				      hzram_comp_cpu_dead);
	if (ret < 0)
		return ret;
	hzram_cpuhp_state = ret;
	return 0;
}

void hzram_comp_exit(void)
{
	cpuhp_remove_multi_state(hzram_cpuhp_state);
}
