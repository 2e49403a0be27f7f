//! (stub) see lib.rs
