/** cluster-key-slot ships no types: the Redis Cluster hash slot (CRC16 of the key or its `{tag}`). */
declare module 'cluster-key-slot' {
  function calculateSlot(key: string | Buffer): number;
  export = calculateSlot;
}
