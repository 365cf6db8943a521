//! Query-embedding proxy.
