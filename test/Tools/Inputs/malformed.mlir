func.func @broken( {
  tiledattn.sdpa %q,
