//! LRU cache of recent query vectors.
//!
//! Users repeat queries (reloading a result page, going back, popular questions); a cached vector costs a
//! hash lookup instead of a forward pass on a shared 2-core machine. Keys are the model id and the exact query
//! text: the same text always yields the same vector from the same model, so the answer is identical to a fresh
//! embedding, and one cache serves every model of the proxy without mixing their vectors.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use lru::LruCache;

/// A cache key: (model id, query text).
type Key = (Arc<str>, String);

/// A thread-safe LRU map from (model, query text) to its vector; capacity 0 disables it.
pub struct VectorCache {
    inner: Option<Mutex<LruCache<Key, Arc<[f32]>>>>,
}

impl VectorCache {
    /// A cache holding at most `capacity` vectors.
    pub fn new(capacity: usize) -> Self {
        VectorCache {
            inner: NonZeroUsize::new(capacity).map(|cap| Mutex::new(LruCache::new(cap))),
        }
    }

    /// The cached vector of `text` by `model`, marking it recently used.
    pub fn get(&self, model: &Arc<str>, text: &str) -> Option<Arc<[f32]>> {
        let cache = self.inner.as_ref()?;
        cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(Arc::clone(model), text.to_owned()))
            .cloned()
    }

    /// Remembers the vector of `text` by `model`, evicting the least recently used entry when full.
    pub fn put(&self, model: &Arc<str>, text: &str, vector: Arc<[f32]>) {
        if let Some(cache) = &self.inner {
            cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .put((Arc::clone(model), text.to_owned()), vector);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used() {
        let m: Arc<str> = Arc::from("m");
        let cache = VectorCache::new(2);
        cache.put(&m, "a", Arc::from([1.0f32]));
        cache.put(&m, "b", Arc::from([2.0f32]));
        assert_eq!(cache.get(&m, "a").as_deref(), Some(&[1.0f32][..]));
        cache.put(&m, "c", Arc::from([3.0f32]));
        assert!(cache.get(&m, "b").is_none(), "b was least recently used");
        assert!(cache.get(&m, "a").is_some() && cache.get(&m, "c").is_some());
    }

    #[test]
    fn models_do_not_share_vectors() {
        let (e5, gemma): (Arc<str>, Arc<str>) = (Arc::from("e5"), Arc::from("gemma"));
        let cache = VectorCache::new(4);
        cache.put(&e5, "Miete", Arc::from([1.0f32]));
        assert!(cache.get(&gemma, "Miete").is_none());
        cache.put(&gemma, "Miete", Arc::from([2.0f32, 3.0]));
        assert_eq!(cache.get(&e5, "Miete").as_deref(), Some(&[1.0f32][..]));
        assert_eq!(
            cache.get(&gemma, "Miete").as_deref(),
            Some(&[2.0f32, 3.0][..])
        );
    }

    #[test]
    fn zero_capacity_disables() {
        let m: Arc<str> = Arc::from("m");
        let cache = VectorCache::new(0);
        cache.put(&m, "a", Arc::from([1.0f32]));
        assert!(cache.get(&m, "a").is_none());
    }
}
