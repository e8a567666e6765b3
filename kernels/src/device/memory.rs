//! Memory ordering and special loads: fences, volatile, relaxed and acquire/release accesses
//! (for flag-based kernels), and read-only cached loads (`ld.global.nc`, CUDA's `__ldg`), also
//! with an L2 evict-first policy for data that streams past; L2 eviction priorities.

use core::arch::asm;

/// Gives the 128-byte L2 line holding `address` the normal eviction priority again (lines an
/// access-policy window made persisting stay in L2 until then).
///
/// # Safety
/// `address` is a valid global-memory pointer.
#[inline(always)]
pub unsafe fn l2_evict_normal<T>(address: *const T) {
    // SAFETY: the caller guarantees a valid global address; the line's data is unchanged.
    unsafe {
        asm!("applypriority.global.L2::evict_normal [{a}], 128;", a = in(reg64) address, options(nostack))
    }
}

/// Orders this thread's memory accesses as seen by the whole GPU (`__threadfence`).
#[inline(always)]
pub fn fence_gpu() {
    // SAFETY: a fence has no operands.
    unsafe { asm!("fence.acq_rel.gpu;") }
}

/// Orders this thread's memory accesses as seen by its block (`__threadfence_block`).
#[inline(always)]
pub fn fence_block() {
    // SAFETY: a fence has no operands.
    unsafe { asm!("fence.acq_rel.cta;") }
}

/// A load the compiler may not cache in a register or drop (polling a flag).
///
/// # Safety
/// `address` is a valid, aligned device pointer.
#[inline(always)]
pub unsafe fn load_volatile<T: Copy>(address: *const T) -> T {
    unsafe { core::ptr::read_volatile(address) }
}

/// A store the compiler may not delay or drop.
///
/// # Safety
/// `address` is a valid, aligned device pointer.
#[inline(always)]
pub unsafe fn store_volatile<T: Copy>(address: *mut T, value: T) {
    unsafe { core::ptr::write_volatile(address, value) }
}

/// Types with relaxed loads and stores at GPU scope.
pub trait Relaxed: Copy {
    /// # Safety
    /// `address` is a valid, aligned global-memory pointer.
    unsafe fn load_relaxed(address: *const Self) -> Self;

    /// # Safety
    /// As [`Relaxed::load_relaxed`].
    unsafe fn store_relaxed(address: *mut Self, value: Self);
}

macro_rules! relaxed_impl {
    ($t:ty, $ptx:literal, $class:ident) => {
        impl Relaxed for $t {
            #[inline(always)]
            unsafe fn load_relaxed(address: *const Self) -> Self {
                let value: $t;
                // SAFETY: the caller guarantees a valid global address. Not `pure`: every
                // call loads again (a polling loop).
                unsafe {
                    asm!(concat!("ld.relaxed.gpu.global.", $ptx, " {v}, [{a}];"),
                        v = out($class) value, a = in(reg64) address, options(readonly, nostack))
                };
                value
            }

            #[inline(always)]
            unsafe fn store_relaxed(address: *mut Self, value: Self) {
                // SAFETY: the caller guarantees a valid global address.
                unsafe {
                    asm!(concat!("st.relaxed.gpu.global.", $ptx, " [{a}], {v};"),
                        a = in(reg64) address, v = in($class) value, options(nostack))
                };
            }
        }
    };
}
relaxed_impl!(u32, "b32", reg32);
relaxed_impl!(f32, "b32", reg32);
relaxed_impl!(f64, "b64", reg64);
relaxed_impl!(u64, "b64", reg64);

/// A load that sees the latest store of any thread of the GPU and that the compiler may not
/// cache or drop (polling a value another block publishes): `ld.relaxed.gpu`, cheaper than a
/// volatile load (system scope).
///
/// # Safety
/// `address` is a valid, aligned global-memory pointer.
#[inline(always)]
pub unsafe fn load_relaxed<T: Relaxed>(address: *const T) -> T {
    unsafe { T::load_relaxed(address) }
}

/// The store [`load_relaxed`] sees: `st.relaxed.gpu`.
///
/// # Safety
/// `address` is a valid, aligned global-memory pointer.
#[inline(always)]
pub unsafe fn store_relaxed<T: Relaxed>(address: *mut T, value: T) {
    unsafe { T::store_relaxed(address, value) }
}

/// [`load_relaxed`] of two words at once (`ld.relaxed.gpu.v2`): one trip, each word still
/// single-copy atomic on its own.
///
/// # Safety
/// `address` is a valid, 16-byte-aligned global-memory pointer to two words.
#[inline(always)]
pub unsafe fn load_relaxed_pair(address: *const u64) -> (u64, u64) {
    let (first, second): (u64, u64);
    // SAFETY: the caller guarantees a valid, aligned global address. Not `pure`: every call
    // loads again (a polling loop).
    unsafe {
        asm!("ld.relaxed.gpu.global.v2.b64 {{{f}, {s}}}, [{a}];",
            f = out(reg64) first, s = out(reg64) second, a = in(reg64) address, options(readonly, nostack))
    };
    (first, second)
}

/// The store [`load_relaxed_pair`] sees: two words in one `st.relaxed.gpu.v2`.
///
/// # Safety
/// As [`load_relaxed_pair`].
#[inline(always)]
pub unsafe fn store_relaxed_pair(address: *mut u64, (first, second): (u64, u64)) {
    // SAFETY: the caller guarantees a valid, aligned global address.
    unsafe {
        asm!("st.relaxed.gpu.global.v2.b64 [{a}], {{{f}, {s}}};",
            a = in(reg64) address, f = in(reg64) first, s = in(reg64) second, options(nostack))
    };
}

/// Load with acquire semantics at GPU scope: later accesses see what the releasing thread
/// wrote before its [`store_release`].
///
/// # Safety
/// `address` is a valid, aligned device pointer.
#[inline(always)]
pub unsafe fn load_acquire(address: *const u32) -> u32 {
    let value: u32;
    unsafe { asm!("ld.acquire.gpu.u32 {v}, [{a}];", v = out(reg32) value, a = in(reg64) address) };
    value
}

/// Store with release semantics at GPU scope (publishes a flag after the data it guards).
///
/// # Safety
/// `address` is a valid, aligned device pointer.
#[inline(always)]
pub unsafe fn store_release(address: *mut u32, value: u32) {
    unsafe { asm!("st.release.gpu.u32 [{a}], {v};", a = in(reg64) address, v = in(reg32) value) };
}

/// Types with a read-only cached load.
pub trait LoadNc: Copy {
    /// # Safety
    /// `address` is a valid, aligned global-memory pointer to data no thread writes during
    /// the kernel.
    unsafe fn load_nc(address: *const Self) -> Self;

    /// # Safety
    /// As [`LoadNc::load_nc`].
    unsafe fn load_stream(address: *const Self) -> Self;

    /// # Safety
    /// As [`LoadNc::load_nc`].
    unsafe fn load_evict_first(address: *const Self) -> Self;

    /// Four consecutive values read once: [`LoadNc::load_stream`] as one 16-byte vector load
    /// (two for 8-byte values; four scalar loads for smaller ones).
    ///
    /// # Safety
    /// As [`LoadNc::load_nc`], for four values, 16-byte aligned.
    unsafe fn load_quad_stream(address: *const Self) -> [Self; 4] {
        // SAFETY: the caller guarantees four valid values.
        unsafe { [0, 1, 2, 3].map(|k| Self::load_stream(address.add(k))) }
    }
}

/// [`LoadNc::load_quad_stream`] as `$loads`, the vector loads of four `$t` into `{a}`..`{d}`
/// from `[{p}]` under the evict-first `policy`.
macro_rules! quad_stream {
    ($t:ty, $class:ident, $loads:expr) => {
        #[inline(always)]
        unsafe fn load_quad_stream(address: *const Self) -> [Self; 4] {
            let (a, b, c, d): ($t, $t, $t, $t);
            // SAFETY: the caller guarantees four valid, aligned, read-only global values.
            unsafe {
                asm!(concat!(
                    "{{ .reg .b64 policy; createpolicy.fractional.L2::evict_first.b64 policy, 1.0; ",
                    $loads, " }}"),
                    a = out($class) a, b = out($class) b, c = out($class) c, d = out($class) d,
                    p = in(reg64) address, options(pure, readonly, nostack))
            };
            [a, b, c, d]
        }
    };
}

/// The streaming `ld` of four 4-byte values: one `v4` load.
macro_rules! quad_v4 {
    ($ptx:literal) => {
        concat!(
            "ld.global.nc.L1::no_allocate.L2::cache_hint.v4.",
            $ptx,
            " {{{a}, {b}, {c}, {d}}}, [{p}], policy;"
        )
    };
}

/// A read-only load of `$t` with an L2 `evict_first` policy, `$l1` qualifying its L1 access
/// ("" or "L1::no_allocate.").
macro_rules! evict_first_load {
    ($t:ty, $ptx:literal, $class:ident, $l1:literal, $address:expr) => {{
        let value: $t;
        // SAFETY: the caller guarantees a valid read-only global address.
        unsafe {
            asm!(concat!(
                "{{ .reg .b64 policy; createpolicy.fractional.L2::evict_first.b64 policy, 1.0; ",
                "ld.global.nc.", $l1, "L2::cache_hint.", $ptx, " {v}, [{a}], policy; }}"),
                v = out($class) value, a = in(reg64) $address, options(pure, readonly, nostack))
        };
        value
    }};
}

macro_rules! load_nc_impl {
    ($t:ty, $ptx:literal, $class:ident $(, $quad:expr)?) => {
        impl LoadNc for $t {
            $(quad_stream!($t, $class, $quad);)?

            #[inline(always)]
            unsafe fn load_nc(address: *const Self) -> Self {
                let value: $t;
                // SAFETY: the caller guarantees a valid read-only global address.
                unsafe {
                    asm!(concat!("ld.global.nc.", $ptx, " {v}, [{a}];"),
                        v = out($class) value, a = in(reg64) address, options(pure, readonly, nostack))
                };
                value
            }

            #[inline(always)]
            unsafe fn load_evict_first(address: *const Self) -> Self {
                evict_first_load!($t, $ptx, $class, "", address)
            }

            #[inline(always)]
            unsafe fn load_stream(address: *const Self) -> Self {
                evict_first_load!($t, $ptx, $class, "L1::no_allocate.", address)
            }
        }
    };
}
load_nc_impl!(u8, "u8", reg16);
load_nc_impl!(u16, "u16", reg16);
load_nc_impl!(u32, "u32", reg32, quad_v4!("u32"));
load_nc_impl!(i32, "s32", reg32, quad_v4!("s32"));
load_nc_impl!(f32, "f32", reg32, quad_v4!("f32"));
// Four 8-byte values: two `v2` loads.
load_nc_impl!(
    f64,
    "f64",
    reg64,
    concat!(
        "ld.global.nc.L1::no_allocate.L2::cache_hint.v2.f64 {{{a}, {b}}}, [{p}], policy; ",
        "ld.global.nc.L1::no_allocate.L2::cache_hint.v2.f64 {{{c}, {d}}}, [{p}+16], policy;"
    )
);

/// Read-only cached load (`__ldg`): goes through the non-coherent texture path.
///
/// # Safety
/// See [`LoadNc::load_nc`].
#[inline(always)]
pub unsafe fn load_nc<T: LoadNc>(address: *const T) -> T {
    unsafe { T::load_nc(address) }
}

/// Read-only load of data read once (a matrix streaming past): first out of L2 when room is
/// needed (`evict_first` policy) and not kept in L1, so that it does not push out data that
/// is read again, such as the vector a sparse product gathers from. Not for data whose lines
/// neighbouring threads share through L1 (the CSR SpMV lost up to 34% with it; PERF.md): see
/// [`load_evict_first`].
///
/// # Safety
/// See [`LoadNc::load_nc`].
#[inline(always)]
pub unsafe fn load_stream<T: LoadNc>(address: *const T) -> T {
    unsafe { T::load_stream(address) }
}

/// Read-only load through L1, first out of L2 when room is needed (`evict_first` policy): for
/// a matrix streaming past whose lines the threads of a warp share (in L1), so that it does
/// not push the vectors of a multicolor sweep out of L2 (PERF.md).
///
/// # Safety
/// See [`LoadNc::load_nc`].
#[inline(always)]
pub unsafe fn load_evict_first<T: LoadNc>(address: *const T) -> T {
    unsafe { T::load_evict_first(address) }
}

/// Four consecutive values, 16-byte aligned: one 16-byte vector access for f32, two for f64.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct Quad<T>(pub [T; 4]);

/// Loads four consecutive values with vector instructions.
///
/// # Safety
/// `address` is valid for four values and 16-byte aligned.
#[inline(always)]
pub unsafe fn load_quad<T: Copy>(address: *const T) -> [T; 4] {
    unsafe { (*address.cast::<Quad<T>>()).0 }
}

/// Loads four consecutive f32 with one 16-byte read-only cached load ([`load_nc`]'s vector
/// form).
///
/// # Safety
/// As [`load_nc`], for four values, 16-byte aligned.
#[inline(always)]
pub unsafe fn load_quad_nc(address: *const f32) -> [f32; 4] {
    let (x, y, z, w): (f32, f32, f32, f32);
    // SAFETY: the caller guarantees four valid, aligned, read-only global values.
    unsafe {
        asm!("ld.global.nc.v4.f32 {{{x}, {y}, {z}, {w}}}, [{a}];",
            x = out(reg32) x, y = out(reg32) y, z = out(reg32) z, w = out(reg32) w,
            a = in(reg64) address, options(pure, readonly, nostack))
    };
    [x, y, z, w]
}

/// Stores four consecutive values with vector instructions.
///
/// # Safety
/// `address` is valid for four values and 16-byte aligned.
#[inline(always)]
pub unsafe fn store_quad<T: Copy>(address: *mut T, values: [T; 4]) {
    unsafe { *address.cast::<Quad<T>>() = Quad(values) }
}

/// Two consecutive values, 16-byte aligned: one 16-byte vector access for f64.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct Pair<T>(pub [T; 2]);

/// Loads two consecutive values with one vector instruction.
///
/// # Safety
/// `address` is valid for two values and 16-byte aligned.
#[inline(always)]
pub unsafe fn load_pair<T: Copy>(address: *const T) -> [T; 2] {
    unsafe { (*address.cast::<Pair<T>>()).0 }
}

/// Stores two consecutive values with one vector instruction.
///
/// # Safety
/// `address` is valid for two values and 16-byte aligned.
#[inline(always)]
pub unsafe fn store_pair<T: Copy>(address: *mut T, values: [T; 2]) {
    unsafe { *address.cast::<Pair<T>>() = Pair(values) }
}

/// Asks L2 to fetch the 128-byte line holding `address` (`prefetch.global.L2`): no register
/// waits for it, so a kernel can start the loads of data it needs only at its end.
///
/// # Safety
/// `address` is a global-memory address (a prefetch of a bad one is a fault).
#[inline(always)]
pub unsafe fn prefetch_l2<T>(address: *const T) {
    unsafe { asm!("prefetch.global.L2 [{a}];", a = in(reg64) address, options(readonly, nostack)) };
}
