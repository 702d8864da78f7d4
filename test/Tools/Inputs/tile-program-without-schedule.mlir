// A tile program whose function says it is a kernel but not how to launch it.
func.func @no_schedule(%x: f32) attributes {tiledattn.kernel} {
  return
}
