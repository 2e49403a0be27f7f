//! The process's allocator (mimalloc) and its one tuning.
//!
//! A region server frees a whole memstore (128 MiB by default) at every
//! flush and fills a new one right after. mimalloc's default returns freed
//! pages to the OS after a second, so every flush cycle paid to fault the
//! same memory back in (on a VM, ~15% of the server's CPU went to zeroing
//! pages). Like a JVM heap, ferrobase keeps what it freed for reuse; the
//! memory ceiling is still set by the memstore and cache settings.
//!
//! This module must never do anything else with the allocator.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

    #[test]
    fn the_index_is_purge_delay_and_setting_it_sticks() {
        // mimalloc v3's default purge delay is 1000 ms: if the index pointed
        // at another option (all small numbers), this would fail.
        assert_eq!(purge_delay(), 1000);
        super::keep_freed_memory();
        assert_eq!(purge_delay(), -1);
    }
}
