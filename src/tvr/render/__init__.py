"""Rendering pieces shared by the benchmarks' worlds: camera, meshes, scene, raster and Cycles."""
