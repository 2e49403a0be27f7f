//! [`S3Fs`]: an S3 bucket (or any S3-compatible store) as a storage root.
//! Placeholder: being written.

use crate::error::{Result, StorageError};

/// An S3 root.
#[derive(Debug)]
pub struct S3Fs;

impl S3Fs {
    /// Parses `bucket[/prefix][?k=v&...]` (the part after `s3://`).
    pub fn from_url(rest: &str) -> Result<std::convert::Infallible> {
        Err(StorageError::InvalidRequest(format!(
            "storage root 's3://{rest}': S3 support is not built yet (need a bucket)"
        )))
    }
}
