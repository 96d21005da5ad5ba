/**
 * Arrival positions. The allocators that hand out the strictly increasing positions ingestion
 * writes beside each message and the tick reads in order, and the lease they hold.
 */
export {
  LeaseReleaseError,
  type PositionAllocator,
  type PositionLease,
  SequenceAllocator,
} from "./positions.js";
