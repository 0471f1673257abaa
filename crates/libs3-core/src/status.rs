//! Declaring an ABI's `S3Status`: a C int newtype (C may hand us any
//! value), one constant per name numbered by position as the C enum is,
//! the name table `S3_get_status_name` returns, and libs3's retry rule.

/// `s3_statuses! { OK, InternalError, ... }` in the calling crate, which
/// must define `#[repr(transparent)] pub struct S3Status(pub c_int)`.
#[macro_export]
macro_rules! s3_statuses {
    ($($name:ident),+ $(,)?) => {
        #[allow(non_upper_case_globals)]
        impl S3Status {
            $crate::s3_statuses!(@consts 0, $($name),+);

            /// The name libs3 prints for this status (`"ErrorNoSuchKey"`),
            /// or `"Unknown"`.
            pub fn name_ptr(self) -> *const ::std::ffi::c_char {
                let name = usize::try_from(self.0)
                    .ok()
                    .and_then(|i| ALL.get(i))
                    .map_or("Unknown\0", |(_, n)| n);
                name.as_ptr().cast()
            }

            /// libs3's retry rule: network trouble and the server's
            /// transient errors.
            pub fn is_retryable(self) -> bool {
                [
                    S3Status::NameLookupError,
                    S3Status::FailedToConnect,
                    S3Status::ConnectionFailed,
                    S3Status::ErrorInternalError,
                    S3Status::ErrorOperationAborted,
                    S3Status::ErrorRequestTimeout,
                ]
                .contains(&self)
            }
        }
        /// `(status, NUL-terminated name)` for every status, in order.
        pub const ALL: &[(S3Status, &str)] =
            &[$((S3Status::$name, concat!(stringify!($name), "\0"))),+];
    };
    (@consts $n:expr, $name:ident $(, $rest:ident)*) => {
        pub const $name: S3Status = S3Status($n);
        $crate::s3_statuses!(@consts $n + 1 $(, $rest)*);
    };
    (@consts $n:expr) => {};
}
