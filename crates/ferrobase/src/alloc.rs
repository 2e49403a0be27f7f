//! The process's allocator (mimalloc) and its one tuning.
//!
//! A region server frees a whole memstore (128 MiB by default) at every
//! flush and fills a new one right after. mimalloc's default returns freed
//! pages to the OS after a second, so every flush cycle paid to fault the
//! same memory back in (on a VM, ~15% of the server's CPU went to zeroing
//! pages). Like a JVM heap, ferrobase keeps what it freed for reuse; the
//! memory ceiling is still set by the memstore and cache settings.
//!
//! The `mimalloc` crate's allocator asks for every allocation by alignment
//! (`mi_malloc_aligned`), and mimalloc v3 serves that from its fast path
//! only up to 1 KiB: a larger block, such as a wide row's cells (a 53-column
//! row is about 1.2 KiB at the client and again in the memstore), went
//! through the generic aligned path at over 100 instructions a call. Every
//! mimalloc block is at least 8-byte aligned, so [`Allocator`] asks for
//! plain `mi_malloc` whenever that is all the layout needs.
//!
//! This module must never do anything else with the allocator.

use libmimalloc_sys::{
    mi_free, mi_malloc, mi_malloc_aligned, mi_realloc, mi_realloc_aligned, mi_zalloc,
    mi_zalloc_aligned,
};
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

#[global_allocator]
static GLOBAL: Allocator = Allocator;

/// The alignment every mimalloc block has: block sizes are whole 8-byte
/// words and each page's first block is 16-byte aligned (mimalloc v3,
/// `MI_PAGE_MIN_START_BLOCK_ALIGN`); huge blocks are OS-page aligned.
const BLOCK_ALIGN: usize = 8;

/// mimalloc, asked for alignment only when a layout needs more than every
/// block has (see the module docs).
pub struct Allocator;

// SAFETY: each method hands mimalloc a layout's size (non-zero, as
// `GlobalAlloc` requires of callers) and, when the layout's alignment is
// above `BLOCK_ALIGN`, its alignment; otherwise the plain call returns a
// block aligned to `BLOCK_ALIGN` ≥ the layout's alignment (the test below
// checks both kinds of layout). Memory from either call is freed or resized
// by `mi_free`/`mi_realloc*`, which accept blocks from any mimalloc
// allocation call. A null return is passed on as the allocation error.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl's comment.
        unsafe {
            if layout.align() <= BLOCK_ALIGN {
                mi_malloc(layout.size()) as *mut u8
            } else {
                mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl's comment.
        unsafe {
            if layout.align() <= BLOCK_ALIGN {
                mi_zalloc(layout.size()) as *mut u8
            } else {
                mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator (the caller's contract).
        unsafe { mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with `layout`; the new
        // block keeps the layout's alignment as in `alloc`.
        unsafe {
            if layout.align() <= BLOCK_ALIGN {
                mi_realloc(ptr as *mut c_void, new_size) as *mut u8
            } else {
                mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
            }
        }
    }
}

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_e` (include/mimalloc.h:
/// the 16th entry; libmimalloc-sys has no constant for it). The test below
/// checks the index by its documented default.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Never return freed memory to the OS (see the module docs).
#[allow(unsafe_code)]
pub fn keep_freed_memory() {
    // SAFETY: `mi_option_set` takes an enum index and an integer, touches no
    // caller memory, and mimalloc documents options as settable at any time
    // from any thread (they are atomics). -1 means "never purge".
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}

#[cfg(test)]
mod tests {
    #[allow(unsafe_code)]
    fn purge_delay() -> std::os::raw::c_long {
        // SAFETY: reads an option by index; no memory is passed.
        unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) }
    }

    /// Every size class up to past mimalloc's small, medium and large
    /// limits, at every alignment from 1 to 4 KiB, allocated, written,
    /// grown, shrunk and freed through [`super::Allocator`]: each block is
    /// aligned as its layout asks and keeps its bytes.
    #[test]
    #[allow(unsafe_code)]
    fn blocks_have_their_layouts_alignment_and_keep_their_bytes() {
        use std::alloc::{GlobalAlloc, Layout};
        let a = super::Allocator;
        let sizes = (1..=80usize).chain((1..40).map(|k| k * 97)).chain([
            1024,
            1025,
            4096,
            70_000,
            600_000,
            5 << 20,
        ]);
        for size in sizes {
            for align in (0..=12).map(|k| 1usize << k) {
                let Ok(layout) = Layout::from_size_align(size, align) else {
                    continue;
                };
                // SAFETY: non-zero size; the block is written and read only
                // within `size` (then `2 * size`, then `size / 2 + 1`) bytes
                // and freed once with the layout it has at that point.
                unsafe {
                    let p = if size % 2 == 0 {
                        a.alloc(layout)
                    } else {
                        a.alloc_zeroed(layout)
                    };
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "size {size} align {align}");
                    if size % 2 == 1 {
                        assert_eq!(*p.add(size - 1), 0);
                    }
                    p.write_bytes(0x5A, size);
                    let q = a.realloc(p, layout, 2 * size);
                    assert!(!q.is_null());
                    assert_eq!(q as usize % align, 0, "grown: size {size} align {align}");
                    assert_eq!((*q, *q.add(size - 1)), (0x5A, 0x5A));
                    let small = size / 2 + 1;
                    let grown = Layout::from_size_align_unchecked(2 * size, align);
                    let r = a.realloc(q, grown, small);
                    assert!(!r.is_null());
                    assert_eq!(r as usize % align, 0, "shrunk: size {size} align {align}");
                    assert_eq!(*r.add(small - 1), 0x5A);
                    a.dealloc(r, Layout::from_size_align_unchecked(small, align));
                }
            }
        }
    }

    #[test]
    fn the_index_is_purge_delay_and_setting_it_sticks() {
        // mimalloc v3's default purge delay is 1000 ms: if the index pointed
        // at another option (all small numbers), this would fail.
        assert_eq!(purge_delay(), 1000);
        super::keep_freed_memory();
        assert_eq!(purge_delay(), -1);
    }
}
