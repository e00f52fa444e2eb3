// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: per-CPU compression streams over the kernel's compression
 * libraries (lib/lzo, lib/lz4, lib/zstd), called directly as zram's own
 * backends do: the crypto API's "comp" interface that hzram used first is
 * gone since 6.15.
 *
 * Each initialised device has one stream per online CPU, set up when the
 * CPU comes up (CPU hotplug prepare state) and freed when it is dead, so
 * the I/O path never allocates. A stream is taken with hzram_strm_get(),
 * which locks the current CPU's stream with preemption off: the holder
 * may not sleep, and its CPU cannot go down meanwhile.
 */
#include "hzram.h"

#include <linux/cpuhotplug.h>
#include <linux/lz4.h>
#include <linux/lzo.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/zstd.h>

/*
 * An algorithm. @level() turns algorithm_params' level into the one to
 * use (HZRAM_LEVEL_UNSET: the default) or fails: -EINVAL out of range,
 * -EOPNOTSUPP if the algorithm has no levels. @dict_min and @dict_max
 * bound the dictionaries it takes. @dict_setup() prepares what compression
 * and decompression with @comp's dictionary need, once per device, into
 * comp->dict_data, and @dict_free() frees it. Each CPU's stream gets
 * @cmem_size(comp) bytes of working memory for compression, turned into
 * its context by @cinit() (the memory itself if NULL), and decompression
 * likewise (no memory if @dmem_size is NULL). Neither @compress nor
 * @decompress sleeps or allocates.
 */
struct hzram_backend {
	const char *name;
	int (*level)(int *level);
	size_t dict_min, dict_max;
	int (*dict_setup)(struct hzram_comp *comp);
	void (*dict_free)(struct hzram_comp *comp);
	size_t (*cmem_size)(const struct hzram_comp *comp);
	void *(*cinit)(void *mem, size_t size);
	/* @src is PAGE_SIZE bytes; *@dst_len is @dst's room, then its length. */
	int (*compress)(const struct hzram_comp *comp, void *cctx,
			const void *src, void *dst, unsigned int *dst_len);
	size_t (*dmem_size)(void);
	void *(*dinit)(void *mem, size_t size);
	/* Return: 0 if @src decodes to exactly PAGE_SIZE bytes at @dst. */
	int (*decompress)(const struct hzram_comp *comp, void *dctx,
			  const void *src, unsigned int src_len, void *dst);
};

#if IS_ENABLED(CONFIG_LZO_COMPRESS) && IS_ENABLED(CONFIG_LZO_DECOMPRESS)
static int hzram_lzo_level(int *level)
{
	return *level == HZRAM_LEVEL_UNSET ? 0 : -EOPNOTSUPP;
}

static size_t hzram_lzo_cmem_size(const struct hzram_comp *comp)
{
	return LZO1X_1_MEM_COMPRESS;
}

static int hzram_lzo_compress(const struct hzram_comp *comp, void *cctx,
			      const void *src, void *dst,
			      unsigned int *dst_len)
{
	size_t len = *dst_len;
	int ret = lzo1x_1_compress(src, PAGE_SIZE, dst, &len, cctx);

	*dst_len = len;
	return ret == LZO_E_OK ? 0 : -EINVAL;
}

static int hzram_lzorle_compress(const struct hzram_comp *comp, void *cctx,
				 const void *src, void *dst,
				 unsigned int *dst_len)
{
	size_t len = *dst_len;
	int ret = lzorle1x_1_compress(src, PAGE_SIZE, dst, &len, cctx);

	*dst_len = len;
	return ret == LZO_E_OK ? 0 : -EINVAL;
}

static int hzram_lzo_decompress(const struct hzram_comp *comp, void *dctx,
				const void *src, unsigned int src_len,
				void *dst)
{
	size_t len = PAGE_SIZE;
	int ret = lzo1x_decompress_safe(src, src_len, dst, &len);

	return ret == LZO_E_OK && len == PAGE_SIZE ? 0 : -EINVAL;
}
#endif

/*
 * LZ4 and LZ4HC with a dictionary: the last 64 KiB of history is all
 * LZ4 can refer to, so, as zram, a larger dictionary is refused; and
 * LZ4_loadDict() loads nothing under 8 bytes (its hash unit).
 */
#define HZRAM_LZ4_DICT_MAX	(64 * 1024)
#define HZRAM_LZ4_DICT_MIN	8

#if IS_ENABLED(CONFIG_LZ4_DECOMPRESS)
static int hzram_lz4_decompress(const struct hzram_comp *comp, void *dctx,
				const void *src, unsigned int src_len,
				void *dst)
{
	int len;

	if (comp->dict_sz)
		len = LZ4_decompress_safe_usingDict(src, dst, src_len,
						    PAGE_SIZE, comp->dict,
						    comp->dict_sz);
	else
		len = LZ4_decompress_safe(src, dst, src_len, PAGE_SIZE);
	return len == PAGE_SIZE ? 0 : -EINVAL;
}
#endif

#if IS_ENABLED(CONFIG_LZ4_COMPRESS) && IS_ENABLED(CONFIG_LZ4_DECOMPRESS)
/*
 * lz4's level is its acceleration, 1 (the default) to 65537 (liblz4's
 * LZ4_ACCELERATION_MAX). zram takes any from 1, but the kernel's LZ4
 * shifts it left by 6 in 32 bits: at 2^26 and its multiples the step
 * wraps to 0 and the output decodes, wrongly, without an error.
 */
#define HZRAM_LZ4_ACCELERATION_MAX	65537

static int hzram_lz4_level(int *level)
{
	if (*level == HZRAM_LEVEL_UNSET)
		*level = LZ4_ACCELERATION_DEFAULT;
	return *level >= LZ4_ACCELERATION_DEFAULT &&
	       *level <= HZRAM_LZ4_ACCELERATION_MAX ? 0 : -EINVAL;
}

/* The stream with the dictionary loaded, copied before each page. */
static int hzram_lz4_dict_setup(struct hzram_comp *comp)
{
	LZ4_stream_t *s = kvzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return -ENOMEM;
	if (LZ4_loadDict(s, comp->dict, comp->dict_sz) != comp->dict_sz) {
		kvfree(s);
		return -EINVAL;
	}
	comp->dict_data = s;
	return 0;
}

static void hzram_lz4_dict_free(struct hzram_comp *comp)
{
	kvfree(comp->dict_data);
}

static size_t hzram_lz4_cmem_size(const struct hzram_comp *comp)
{
	return LZ4_MEM_COMPRESS;
}

static int hzram_lz4_compress(const struct hzram_comp *comp, void *cctx,
			      const void *src, void *dst,
			      unsigned int *dst_len)
{
	int len;

	if (comp->dict_sz) {
		memcpy(cctx, comp->dict_data, sizeof(LZ4_stream_t));
		len = LZ4_compress_fast_continue(cctx, src, dst, PAGE_SIZE,
						 *dst_len, comp->level);
	} else {
		len = LZ4_compress_fast(src, dst, PAGE_SIZE, *dst_len,
					comp->level, cctx);
	}
	if (len <= 0)
		return -EINVAL;
	*dst_len = len;
	return 0;
}
#endif

#if IS_ENABLED(CONFIG_LZ4HC_COMPRESS) && IS_ENABLED(CONFIG_LZ4_DECOMPRESS)
/* 1 to LZ4HC_MAX_CLEVEL, as zram's (levels below 3 are valid too). */
static int hzram_lz4hc_level(int *level)
{
	if (*level == HZRAM_LEVEL_UNSET)
		*level = LZ4HC_DEFAULT_CLEVEL;
	return *level >= 1 && *level <= LZ4HC_MAX_CLEVEL ? 0 : -EINVAL;
}

/* Nothing to prepare: the dictionary is loaded before each page. */
static int hzram_lz4hc_dict_setup(struct hzram_comp *comp)
{
	return 0;
}

static size_t hzram_lz4hc_cmem_size(const struct hzram_comp *comp)
{
	return LZ4HC_MEM_COMPRESS;
}

static int hzram_lz4hc_compress(const struct hzram_comp *comp, void *cctx,
				const void *src, void *dst,
				unsigned int *dst_len)
{
	int len;

	if (comp->dict_sz) {
		/*
		 * LZ4_resetStreamHC(), which 6.1 does not export: the level,
		 * and no history (LZ4_loadDictHC() clears the tables).
		 */
		LZ4_streamHC_t *s = cctx;

		s->internal_donotuse.base = NULL;
		s->internal_donotuse.compressionLevel = comp->level;
		if (LZ4_loadDictHC(cctx, comp->dict, comp->dict_sz) !=
		    comp->dict_sz)
			return -EINVAL;
		len = LZ4_compress_HC_continue(cctx, src, dst, PAGE_SIZE,
					       *dst_len);
	} else {
		len = LZ4_compress_HC(src, dst, PAGE_SIZE, *dst_len,
				      comp->level, cctx);
	}
	if (len <= 0)
		return -EINVAL;
	*dst_len = len;
	return 0;
}
#endif

#if IS_ENABLED(CONFIG_ZSTD_COMPRESS) && IS_ENABLED(CONFIG_ZSTD_DECOMPRESS)
/* zstd's default level (ZSTD_CLEVEL_DEFAULT), as zram's. */
#define HZRAM_ZSTD_LEVEL	3

static int hzram_zstd_level(int *level)
{
	if (*level == HZRAM_LEVEL_UNSET)
		*level = HZRAM_ZSTD_LEVEL;
	return *level >= zstd_min_clevel() && *level <= zstd_max_clevel() ?
	       0 : -EINVAL;
}

#ifdef HZRAM_HAVE_ZSTD_CDICT
/*
 * zstd with a dictionary (the kernel's zstd has the interface since
 * 6.12, HZRAM_HAVE_ZSTD_CDICT): a compression and a decompression
 * dictionary, made once and referring to comp->dict, as zram's. The
 * streams' contexts stay static, in memory sized for the dictionary's
 * parameters, so that no page allocates.
 */
struct hzram_zstd_dict {
	zstd_cdict *cdict;
	zstd_ddict *ddict;
};

static void *hzram_zstd_alloc(void *opaque, size_t size)
{
	return kvzalloc(size, GFP_KERNEL);
}

static void hzram_zstd_free(void *opaque, void *address)
{
	kvfree(address);
}

static const zstd_custom_mem hzram_zstd_mem = {
	.customAlloc = hzram_zstd_alloc,
	.customFree = hzram_zstd_free,
};

static void hzram_zstd_dict_free(struct hzram_comp *comp)
{
	struct hzram_zstd_dict *d = comp->dict_data;

	if (!d)
		return;
	zstd_free_cdict(d->cdict);
	zstd_free_ddict(d->ddict);
	kfree(d);
}

static int hzram_zstd_dict_setup(struct hzram_comp *comp)
{
	struct hzram_zstd_dict *d = kzalloc(sizeof(*d), GFP_KERNEL);

	if (!d)
		return -ENOMEM;
	comp->dict_data = d;
	d->cdict = zstd_create_cdict_byreference(comp->dict, comp->dict_sz,
			zstd_get_cparams(comp->level, PAGE_SIZE, comp->dict_sz),
			hzram_zstd_mem);
	d->ddict = zstd_create_ddict_byreference(comp->dict, comp->dict_sz,
						 hzram_zstd_mem);
	if (!d->cdict || !d->ddict) {
		hzram_zstd_dict_free(comp);
		comp->dict_data = NULL;
		return -EINVAL;
	}
	return 0;
}
#endif

static size_t hzram_zstd_cmem_size(const struct hzram_comp *comp)
{
	zstd_compression_parameters cp =
		zstd_get_params(comp->level, PAGE_SIZE).cParams;

#ifdef HZRAM_HAVE_ZSTD_CDICT
	if (comp->dict_sz)
		cp = zstd_get_cparams(comp->level, PAGE_SIZE, comp->dict_sz);
#endif
	return zstd_cctx_workspace_bound(&cp);
}

static void *hzram_zstd_cinit(void *mem, size_t size)
{
	return zstd_init_cctx(mem, size);
}

static int hzram_zstd_compress(const struct hzram_comp *comp, void *cctx,
			       const void *src, void *dst,
			       unsigned int *dst_len)
{
	zstd_parameters params = zstd_get_params(comp->level, PAGE_SIZE);
	size_t len;

#ifdef HZRAM_HAVE_ZSTD_CDICT
	if (comp->dict_sz) {
		const struct hzram_zstd_dict *d = comp->dict_data;

		len = zstd_compress_using_cdict(cctx, dst, *dst_len, src,
						PAGE_SIZE, d->cdict);
	} else
#endif
		len = zstd_compress_cctx(cctx, dst, *dst_len, src, PAGE_SIZE,
					 &params);
	if (zstd_is_error(len))
		return -EINVAL;
	*dst_len = len;
	return 0;
}

static size_t hzram_zstd_dmem_size(void)
{
	return zstd_dctx_workspace_bound();
}

static void *hzram_zstd_dinit(void *mem, size_t size)
{
	return zstd_init_dctx(mem, size);
}

static int hzram_zstd_decompress(const struct hzram_comp *comp, void *dctx,
				 const void *src, unsigned int src_len,
				 void *dst)
{
	size_t len;

#ifdef HZRAM_HAVE_ZSTD_CDICT
	if (comp->dict_sz) {
		const struct hzram_zstd_dict *d = comp->dict_data;

		len = zstd_decompress_using_ddict(dctx, dst, PAGE_SIZE, src,
						  src_len, d->ddict);
	} else
#endif
		len = zstd_decompress_dctx(dctx, dst, PAGE_SIZE, src, src_len);
	return !zstd_is_error(len) && len == PAGE_SIZE ? 0 : -EINVAL;
}
#endif

/*
 * The algorithms hzram offers, in zram's order, where the kernel was
 * built with their libraries.
 */
static const struct hzram_backend hzram_backends[] = {
#if IS_ENABLED(CONFIG_LZO_COMPRESS) && IS_ENABLED(CONFIG_LZO_DECOMPRESS)
	{
		.name = "lzo",
		.level = hzram_lzo_level,
		.cmem_size = hzram_lzo_cmem_size,
		.compress = hzram_lzo_compress,
		.decompress = hzram_lzo_decompress,
	},
	{
		.name = "lzo-rle",
		.level = hzram_lzo_level,
		.cmem_size = hzram_lzo_cmem_size,
		.compress = hzram_lzorle_compress,
		.decompress = hzram_lzo_decompress,
	},
#endif
#if IS_ENABLED(CONFIG_LZ4_COMPRESS) && IS_ENABLED(CONFIG_LZ4_DECOMPRESS)
	{
		.name = "lz4",
		.level = hzram_lz4_level,
		.dict_min = HZRAM_LZ4_DICT_MIN,
		.dict_max = HZRAM_LZ4_DICT_MAX,
		.dict_setup = hzram_lz4_dict_setup,
		.dict_free = hzram_lz4_dict_free,
		.cmem_size = hzram_lz4_cmem_size,
		.compress = hzram_lz4_compress,
		.decompress = hzram_lz4_decompress,
	},
#endif
#if IS_ENABLED(CONFIG_LZ4HC_COMPRESS) && IS_ENABLED(CONFIG_LZ4_DECOMPRESS)
	{
		.name = "lz4hc",
		.level = hzram_lz4hc_level,
		.dict_min = HZRAM_LZ4_DICT_MIN,
		.dict_max = HZRAM_LZ4_DICT_MAX,
		.dict_setup = hzram_lz4hc_dict_setup,
		.cmem_size = hzram_lz4hc_cmem_size,
		.compress = hzram_lz4hc_compress,
		.decompress = hzram_lz4_decompress,
	},
#endif
#if IS_ENABLED(CONFIG_ZSTD_COMPRESS) && IS_ENABLED(CONFIG_ZSTD_DECOMPRESS)
	{
		.name = "zstd",
		.level = hzram_zstd_level,
#ifdef HZRAM_HAVE_ZSTD_CDICT
		.dict_min = 1,
		.dict_max = INT_MAX,
		.dict_setup = hzram_zstd_dict_setup,
		.dict_free = hzram_zstd_dict_free,
#endif
		.cmem_size = hzram_zstd_cmem_size,
		.cinit = hzram_zstd_cinit,
		.compress = hzram_zstd_compress,
		.dmem_size = hzram_zstd_dmem_size,
		.dinit = hzram_zstd_dinit,
		.decompress = hzram_zstd_decompress,
	},
#endif
};

static enum cpuhp_state hzram_cpuhp_state;

static const struct hzram_backend *hzram_backend_find(const char *name)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(hzram_backends); i++)
		if (!strcmp(name, hzram_backends[i].name))
			return &hzram_backends[i];
	return NULL;
}

bool hzram_comp_available(const char *name)
{
	return hzram_backend_find(name) != NULL;
}

/**
 * hzram_comp_check() - can algorithm @name work with @params?
 * @name: one of the algorithms comp_algorithm lists
 * @params: algorithm_params for it
 *
 * Return: 0; -EINVAL for an unknown algorithm, a level out of its range
 * or a dictionary larger than it takes; -EOPNOTSUPP for a level given to
 * an algorithm without levels, or a dictionary to one without (lzo,
 * lzo-rle; zstd on kernels before 6.12).
 */
int hzram_comp_check(const char *name, const struct hzram_comp_params *params)
{
	const struct hzram_backend *be = hzram_backend_find(name);
	int level = params->level, ret;

	if (!be)
		return -EINVAL;
	ret = be->level(&level);
	if (ret || !params->dict_sz)
		return ret;
	if (!be->dict_setup)
		return -EOPNOTSUPP;
	return params->dict_sz >= be->dict_min &&
	       params->dict_sz <= be->dict_max ? 0 : -EINVAL;
}

/**
 * hzram_comp_helper_lz4() - does @comp make what the helper makes?
 * @comp: a device's primary streams
 *
 * Return: true for lz4 without a dictionary (at any level: the helper's
 * LZ4 decodes the same, and it decodes pages of any level).
 */
bool hzram_comp_helper_lz4(const struct hzram_comp *comp)
{
	return !strcmp(comp->name, "lz4") && !comp->dict_sz;
}

/**
 * hzram_comp_helper_zstd() - could the helper make what @comp decodes?
 * @comp: a device's recompression streams
 * @level: set to the level to give the helper
 *
 * Return: true for zstd without a dictionary, at a level the batch
 * descriptor holds (16 bits): the helper's libzstd makes frames that
 * @comp decodes, and the module decodes each before it keeps it.
 */
bool hzram_comp_helper_zstd(const struct hzram_comp *comp, s16 *level)
{
	if (strcmp(comp->name, "zstd") || comp->dict_sz ||
	    comp->level < S16_MIN || comp->level > S16_MAX)
		return false;
	*level = comp->level;
	return true;
}

/**
 * hzram_comp_available_show() - list the algorithms, as comp_algorithm
 * @cur: the selected algorithm, printed in brackets
 * @buf: sysfs buffer (PAGE_SIZE)
 * @sz: bytes in it already; the list, a line, goes after them
 *
 * Return: the number of bytes in @buf now.
 */
ssize_t hzram_comp_available_show(const char *cur, char *buf, ssize_t sz)
{
	ssize_t start = sz;
	int i;

	for (i = 0; i < ARRAY_SIZE(hzram_backends); i++) {
		const char *alg = hzram_backends[i].name;

		if (!strcmp(cur, alg))
			sz += sysfs_emit_at(buf, sz, "[%s] ", alg);
		else
			sz += sysfs_emit_at(buf, sz, "%s ", alg);
	}
	if (sz > start)
		buf[sz - 1] = '\n';
	return sz;
}

/* What a stream owns. */
struct hzram_strm_mem {
	void *cmem, *cctx;
	void *dmem, *dctx;
	void *buffer;
	void *scratch;
	void *dcopy;
};

static void hzram_strm_mem_free(struct hzram_strm_mem *m)
{
	vfree(m->cmem);
	vfree(m->dmem);
	free_page((unsigned long)m->scratch);
	free_page((unsigned long)m->dcopy);
	vfree(m->buffer);
}

static void *hzram_page_alloc(int node)
{
	struct page *page = alloc_pages_node(node, GFP_KERNEL, 0);

	return page ? page_address(page) : NULL;
}

static int hzram_strm_mem_alloc(struct hzram_strm_mem *m,
				const struct hzram_comp *comp, int node)
{
	const struct hzram_backend *be = comp->backend;
	size_t csize = be->cmem_size(comp);
	size_t dsize = be->dmem_size ? be->dmem_size() : 0;

	memset(m, 0, sizeof(*m));
	m->cmem = vzalloc_node(csize, node);
	if (dsize)
		m->dmem = vzalloc_node(dsize, node);
	/* The compressor's output may exceed a page before it gives up. */
	m->buffer = vzalloc_node(2 * PAGE_SIZE, node);
	m->scratch = hzram_page_alloc(node);
	m->dcopy = hzram_page_alloc(node);
	if (!m->cmem || (dsize && !m->dmem) || !m->buffer || !m->scratch ||
	    !m->dcopy)
		goto err;
	m->cctx = be->cinit ? be->cinit(m->cmem, csize) : m->cmem;
	m->dctx = be->dinit ? be->dinit(m->dmem, dsize) : m->dmem;
	if (!m->cctx || (dsize && !m->dctx))
		goto err;
	return 0;
err:
	hzram_strm_mem_free(m);
	return -ENOMEM;
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

	ret = hzram_strm_mem_alloc(&new, comp, cpu_to_node(cpu));
	if (ret) {
		pr_err("cannot set up a %s stream for CPU %u: %d\n", comp->name,
		       cpu, ret);
		return ret;
	}
	strm->comp = comp;
	strm->cmem = new.cmem;
	strm->cctx = new.cctx;
	strm->dmem = new.dmem;
	strm->dctx = new.dctx;
	strm->buffer = new.buffer;
	strm->scratch = new.scratch;
	strm->dcopy = new.dcopy;
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
		.cmem = strm->cmem,
		.dmem = strm->dmem,
		.buffer = strm->buffer,
		.scratch = strm->scratch,
		.dcopy = strm->dcopy,
	};

	strm->cmem = NULL;
	strm->cctx = NULL;
	strm->dmem = NULL;
	strm->dctx = NULL;
	strm->buffer = NULL;
	strm->scratch = NULL;
	strm->dcopy = NULL;
	hzram_strm_mem_free(&old);
	return 0;
}

/**
 * hzram_comp_create() - set up streams of algorithm @name on every CPU
 * @name: one of the algorithms comp_algorithm lists
 * @params: its algorithm_params
 *
 * Return: the streams, or an ERR_PTR (-ENOMEM; hzram_comp_check()'s
 * errors).
 */
struct hzram_comp *hzram_comp_create(const char *name,
				     const struct hzram_comp_params *params)
{
	const struct hzram_backend *be = hzram_backend_find(name);
	struct hzram_comp *comp;
	int cpu, ret;

	ret = hzram_comp_check(name, params);
	if (ret)
		return ERR_PTR(ret);
	comp = kzalloc(sizeof(*comp), GFP_KERNEL);
	if (!comp)
		return ERR_PTR(-ENOMEM);
	comp->backend = be;
	comp->level = params->level;
	be->level(&comp->level);
	strscpy(comp->name, name, sizeof(comp->name));
	/* The device's own copy: algorithm_params may change before reset. */
	if (params->dict_sz) {
		comp->dict = kvmalloc(params->dict_sz, GFP_KERNEL);
		if (!comp->dict) {
			ret = -ENOMEM;
			goto err_free_comp;
		}
		memcpy(comp->dict, params->dict, params->dict_sz);
		comp->dict_sz = params->dict_sz;
		ret = be->dict_setup(comp);
		if (ret)
			goto err_free_dict;
	}
	comp->strm = alloc_percpu(struct hzram_strm);
	if (!comp->strm) {
		ret = -ENOMEM;
		goto err_free_dict_data;
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
err_free_dict_data:
	if (comp->dict_sz && be->dict_free)
		be->dict_free(comp);
err_free_dict:
	kvfree(comp->dict);
err_free_comp:
	kfree(comp);
	return ERR_PTR(ret);
}

void hzram_comp_destroy(struct hzram_comp *comp)
{
	cpuhp_state_remove_instance(hzram_cpuhp_state, &comp->node);
	free_percpu(comp->strm);
	if (comp->dict_sz && comp->backend->dict_free)
		comp->backend->dict_free(comp);
	kvfree(comp->dict);
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
	return strm->comp->backend->compress(strm->comp, strm->cctx, src,
					     strm->buffer, dst_len);
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
	struct hzram_strm *strm;
	int ret;

	if (hzram_fail_decompress())
		return -EIO;
	local_lock(&comp->strm->dlock);
	strm = this_cpu_ptr(comp->strm);
	ret = comp->backend->decompress(comp, strm->dctx, src, src_len, dst);
	local_unlock(&comp->strm->dlock);
	return ret ? -EIO : 0;
}

/**
 * hzram_comp_decompress_obj() - decompress zsmalloc object @handle
 * @comp: the device's streams
 * @pool: the pool holding the object
 * @handle: the object, of @len bytes
 * @len: its length, less than PAGE_SIZE
 * @dst: PAGE_SIZE bytes of output
 *
 * As hzram_comp_decompress(); the object is read in place, or from a copy
 * in the current CPU's stream if it spans two pages.
 *
 * Return: 0, or -EIO if the object is not a valid compressed page.
 */
int hzram_comp_decompress_obj(struct hzram_comp *comp, struct zs_pool *pool,
			      unsigned long handle, unsigned int len, void *dst)
{
	struct hzram_strm *strm;
	const void *src;
	int ret;

	if (hzram_fail_decompress())
		return -EIO;
	local_lock(&comp->strm->dlock);
	strm = this_cpu_ptr(comp->strm);
	src = hzram_zs_read_begin(pool, handle, len, strm->dcopy);
	ret = comp->backend->decompress(comp, strm->dctx, src, len, dst);
	hzram_zs_read_end(pool, handle, len, src);
	local_unlock(&comp->strm->dlock);
	return ret ? -EIO : 0;
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
