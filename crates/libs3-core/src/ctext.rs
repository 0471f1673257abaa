//! Short C strings on the stack: every request hands a few (bucket, key,
//! ETag) across the ABI, and a heap allocation each costs more than the
//! rest of the conversion.

use std::ffi::{c_char, CString};

/// Strings up to this long (keys and bucket names mostly are) stay on the
/// stack.
const SHORT: usize = 160;

/// A NUL-terminated copy of a string, on the stack when short.
pub enum CText {
    Short([u8; SHORT]),
    Long(CString),
}

impl CText {
    /// `s` up to its first NUL (a valid key or ETag never holds one).
    pub fn cut(s: &str) -> CText {
        let end = s.find('\0').unwrap_or(s.len());
        Self::exact(&s[..end]).unwrap_or_else(|| CText::Long(CString::default()))
    }

    /// `s` as it is; `None` if it holds a NUL.
    pub fn exact(s: &str) -> Option<CText> {
        if s.len() >= SHORT {
            return CString::new(s).ok().map(CText::Long);
        }
        if s.as_bytes().contains(&0) {
            return None;
        }
        let mut b = [0u8; SHORT];
        b[..s.len()].copy_from_slice(s.as_bytes());
        Some(CText::Short(b))
    }

    pub fn as_ptr(&self) -> *const c_char {
        match self {
            CText::Short(b) => b.as_ptr().cast(),
            CText::Long(c) => c.as_ptr(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn back(t: &CText) -> &str {
        // SAFETY: a CText is NUL-terminated and lives across the borrow.
        unsafe { CStr::from_ptr(t.as_ptr()) }.to_str().unwrap()
    }

    #[test]
    fn short_and_long_strings_round_trip() {
        let long = "k".repeat(SHORT + 5);
        for s in ["", "a", "dir/key.0001", &"x".repeat(SHORT - 1), &long] {
            assert_eq!(back(&CText::exact(s).unwrap()), s);
            assert_eq!(back(&CText::cut(s)), s);
        }
        assert!(matches!(CText::exact("abc").unwrap(), CText::Short(_)));
        assert!(matches!(CText::exact(&long).unwrap(), CText::Long(_)));
    }

    #[test]
    fn a_nul_cuts_or_refuses() {
        let long_nul = format!("{}\0tail", "k".repeat(SHORT));
        assert!(CText::exact("a\0b").is_none());
        assert!(CText::exact(&long_nul).is_none());
        assert_eq!(back(&CText::cut("a\0b")), "a");
        assert_eq!(back(&CText::cut(&long_nul)), "k".repeat(SHORT));
    }
}
