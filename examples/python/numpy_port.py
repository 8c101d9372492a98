"""A kvconform port serving numpy caches of every kind; `--bug NAME` serves a seeded-bug twin (docs/mutants.md).

Usage: /usr/bin/python3 numpy_port.py [--bug NAME] [--no-poison] [--no-digest]
"""
from kvconform_port import serve
from numpy_caches import beam, flat, growing, hybrid, latent, paged, prefix, radix, recurrent, ring, tiered

CACHES = [flat.FlatCache, ring.RingCache, growing.GrowingCache, paged.PagedCache, prefix.PrefixCache, beam.BeamCache,
          hybrid.HybridCache, latent.LatentCache, tiered.TieredCache, recurrent.RecurrentCache, radix.RadixCache]
BUGS = {
    "flat-strict-capacity": flat.StrictCapacityFlat,
    "flat-no-copy": flat.NoCopyFlat,
    "flat-bonus-slot-off": flat.BonusSlotOffFlat,
    "ring-bulk-evicts-sinks": ring.BulkEvictsSinksRing,
    "ring-rollback-stale-window": ring.RollbackStaleWindowRing,
    "growing-doubles": growing.DoublingGrowing,
    "paged-fork-without-cow": paged.ForkWithoutCowPaged,
    "paged-rollback-truncates-shared-block": paged.RollbackClearsSharedPaged,
    "prefix-hash-without-parent": prefix.HashWithoutParentPrefix,
    "prefix-ignores-extra-key": prefix.IgnoresExtraKeyPrefix,
    "prefix-rollback-writes-registered-block": prefix.RollbackWritesRegisteredPrefix,
    "beam-reorder-aliases": beam.ReorderAliasesBeam,
    "beam-prefill-top-left": beam.PrefillTopLeftBeam,
    "hybrid-global-layers-windowed": hybrid.GlobalWindowedHybrid,
    "latent-values-past-rotary": latent.ValuesPastRotaryLatent,
    "tiered-store-reads-unwritten": tiered.StoreReadsUnwrittenTiered,
    "tiered-reuse-pending-source": tiered.ReusePendingSourceTiered,
    "tiered-load-source-unpinned": tiered.LoadSourceUnpinnedTiered,
    "tiered-room-ignores-pins": tiered.RoomIgnoresPinsTiered,
    "tiered-layout-transposed": tiered.LayoutTransposedTiered,
    "tiered-overlap-device-hit": tiered.OverlapDeviceHitTiered,
    "tiered-consumed-before-load": tiered.ConsumedBeforeLoadTiered,
    "tiered-failed-load-keeps-length": tiered.FailedLoadKeepsLengthTiered,
    "tiered-pending-entry-evictable": tiered.PendingEntryEvictableTiered,
    "tiered-failed-store-leaks-slot": tiered.FailedStoreLeaksSlotTiered,
    "recurrent-rollback-no-op": recurrent.RollbackNoOpRecurrent,
    "recurrent-rollback-keeps-window": recurrent.RollbackKeepsWindowRecurrent,
    "recurrent-publish-before-accept": recurrent.PublishBeforeAcceptRecurrent,
    "recurrent-fork-shares-state": recurrent.ForkSharesStateRecurrent,
    "recurrent-resume-shares-checkpoint": recurrent.ResumeSharesCheckpointRecurrent,
    "recurrent-hit-past-attention-blocks": recurrent.HitPastAttentionBlocksRecurrent,
    "radix-admit-stale-hit": radix.AdmitStaleHitRadix,
    "radix-registers-before-write": radix.RegistersBeforeWriteRadix,
    "radix-lock-skips-matched-node": radix.LockSkipsMatchedNodeRadix,
    "radix-duplicate-freed-unmapped": radix.DuplicateFreedUnmappedRadix,
}

if __name__ == "__main__":
    serve("numpy-caches", CACHES, BUGS)
