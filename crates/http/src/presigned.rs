//! A SigV4 presigned URL whose `X-Amz-Expires` is negative has expired
//! before it was made: AWS answers 403 AccessDenied, "Request has
//! expired", as for any URL past its time, where s3s cannot parse the
//! number and calls the URL malformed (400).

use s3s::{s3_error, S3Result};

pub fn refuse_expired(uri: &hyper::Uri) -> S3Result<()> {
    let Some(query) = uri.query() else {
        return Ok(());
    };
    let mut signed = false;
    let mut negative = false;
    for (name, value) in query.split('&').filter_map(|p| p.split_once('=')) {
        signed |= name == "X-Amz-Signature";
        negative |= name == "X-Amz-Expires" && value.parse::<i64>().is_ok_and(|n| n < 0);
    }
    if signed && negative {
        return Err(s3_error!(
            AccessDenied,
            "Request has expired: X-Amz-Expires is negative; presign the URL again with a \
             positive expiry"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_signed_negative_expiry_is_refused() {
        let uri = |q: &str| format!("/b/k?{q}").parse::<hyper::Uri>().unwrap();
        let e = refuse_expired(&uri("X-Amz-Expires=-1000&X-Amz-Signature=ab")).unwrap_err();
        assert_eq!(e.code(), &s3s::S3ErrorCode::AccessDenied);
        assert!(refuse_expired(&uri("X-Amz-Expires=60&X-Amz-Signature=ab")).is_ok());
        assert!(refuse_expired(&uri("X-Amz-Expires=-1")).is_ok());
        assert!(refuse_expired(&"/b/k".parse().unwrap()).is_ok());
    }
}
