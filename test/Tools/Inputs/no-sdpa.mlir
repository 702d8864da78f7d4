func.func @empty() {
  return
}
