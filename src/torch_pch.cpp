// Anchor for the precompiled LibTorch header target.
