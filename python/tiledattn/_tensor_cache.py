"""What is computed from tensors and kept while they live unchanged (block
maps of masks and of cu_seqlens, int32 offsets, score_mods reading ALiBi
slopes): one rule for all of them, so that none finds a stale value.

A value is kept under the tensors' ids and a key of the other arguments,
with weak references to the tensors and their versions: a tensor changed in
place has a new version, and a freed one's reference is dead, so an id
reused by another tensor never finds the value."""

import weakref


def kept_while_unchanged(store: dict, tensors: tuple, key, build, limit: int = 16):
    """build(), kept in `store` for `tensors` and `key` while the tensors
    live unchanged; the oldest entry goes past `limit`. Tensors without
    weak references (some subclasses) are not cached."""
    versions = tuple(t._version for t in tensors)
    entry = (tuple(id(t) for t in tensors), key)
    held = store.get(entry)
    if (
        held is not None
        and all(ref() is t for ref, t in zip(held[0], tensors))
        and held[1] == versions
    ):
        return held[2]
    value = build()
    try:
        refs = tuple(weakref.ref(t) for t in tensors)
    except TypeError:
        return value
    if len(store) >= limit:
        del store[next(iter(store))]
    store[entry] = (refs, versions, value)
    return value
