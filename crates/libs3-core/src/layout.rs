//! For the shims' layout tests: reading the tables their C probes
//! (`c/layout*.c`) export, and comparing a Rust mirror with one.

use std::ffi::{c_char, c_long, CStr};

/// One `{name, value}` entry of a C probe's table.
#[repr(C)]
pub struct Entry {
    pub what: *const c_char,
    pub value: c_long,
}

/// A `{0, 0}`-terminated C table as (name, value) pairs.
///
/// # Safety
/// `first` points to such a table of NUL-terminated names.
#[allow(clippy::unnecessary_cast)] // c_long is not i64 on every target
pub unsafe fn c_table(first: *const Entry) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    let mut p = first;
    // SAFETY: the table ends with a {0, 0} entry, per the contract.
    unsafe {
        while !(*p).what.is_null() {
            out.push((
                CStr::from_ptr((*p).what).to_string_lossy().into_owned(),
                (*p).value as i64,
            ));
            p = p.add(1);
        }
    }
    out
}

/// `check_layout!(map, "CName", RustType { "cField": rust.field, ... })`
/// asserts size, alignment and every listed field offset against `map`
/// (C name → value); evaluates to the number of fields compared.
#[macro_export]
macro_rules! check_layout {
    ($map:ident, $c:literal, $t:ty { $($cf:literal: $($rf:ident).+),* $(,)? }) => {{
        let mut n = 0;
        assert_eq!($map[concat!($c, "#size")], ::std::mem::size_of::<$t>() as i64, "sizeof {}", $c);
        assert_eq!($map[concat!($c, "#align")], ::std::mem::align_of::<$t>() as i64, "alignof {}", $c);
        $(
            assert_eq!($map[concat!($c, ".", $cf)], ::std::mem::offset_of!($t, $($rf).+) as i64,
                "offsetof {}.{}", $c, $cf);
            n += 1;
        )*
        n
    }};
}
