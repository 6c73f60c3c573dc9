// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file patchify.hpp
/// @brief Images to the vision transformer's patch tensors (paper 001 §5.2, eq. 5.7). An H×W×C image is a tensor3
/// (pixel (r, c) of channel k at (r, c, k)); its N = (H/P)·(W/P) non-overlapping P×P patches become the N×d×C
/// tensor, d = P² positions per patch, mode 1 the patches, mode 2 the positions, mode 3 the channels:
///   𝒳(t, j, k) = ℐ(P·⌊t/g⌋ + ⌊j/P⌋, P·(t mod g) + j mod P, k),   g = W/P,
/// patches numbered row by row over the grid and positions row by row within a patch. The standard ViT's
/// flattened patch (d_eff = P²·C features, p = 1) is slices_side_by_side of it (tensorize.hpp).
///
/// space_to_depth(ℐ, s) moves each s×s block's pixels into channels, phase a·s + b of channel k holding the pixels
/// (s·r + a, s·c + b): out(r, c, k·s² + a·s + b) = ℐ(s·r + a, s·c + b, k), an (H/s)×(W/s)×(C·s²) image. It gives a
/// grayscale image channels to couple ("phases as channels"), as the TCP-ViT example does with Fashion-MNIST.
#include <cstddef>
#include <string>
#include <vector>

#include "tprod/core/error.hpp"
#include "tprod/core/tensor3.hpp"

namespace tprod::nn {

namespace detail {
inline void expect_tiles(const char* what, std::size_t h, std::size_t w, std::size_t side, const char* name) {
  TPROD_EXPECTS(side >= 1, std::string(what) + ": the " + name + " must be at least 1");
  TPROD_EXPECTS(h > 0 && w > 0 && h % side == 0 && w % side == 0,
                std::string(what) + ": a " + std::to_string(h) + "x" + std::to_string(w) + " image does not split into " +
                    std::to_string(side) + "x" + std::to_string(side) + " blocks (" + name + " " +
                    std::to_string(side) + " must divide both sides)");
}
}  // namespace detail

/// @brief The (H/s)×(W/s)×(C·s²) image with out(r, c, k·s² + a·s + b) = ℐ(s·r + a, s·c + b, k).
/// @throws shape_error unless s ≥ 1 divides H and W.
template <class T>
tensor3<T> space_to_depth(const tensor3<T>& image, std::size_t s) {
  detail::expect_tiles("nn::space_to_depth", image.m(), image.n(), s, "factor");
  const std::size_t h = image.m() / s, w = image.n() / s;
  tensor3<T> out(h, w, image.p() * s * s, uninitialized);
  for (std::size_t k = 0; k < image.p(); ++k)
    for (std::size_t a = 0; a < s; ++a)
      for (std::size_t b = 0; b < s; ++b)
        for (std::size_t c = 0; c < w; ++c)
          for (std::size_t r = 0; r < h; ++r) out(r, c, k * s * s + a * s + b) = image(s * r + a, s * c + b, k);
  return out;
}

/// @brief Writes the N×P²×C patch tensor of `image` into rows first … first + N − 1 of `out` (N·B×P²×C).
/// @throws shape_error unless P divides H and W and out has room for the patches, with P² columns and C slices.
template <class T>
void patchify_into(const tensor3<T>& image, std::size_t patch, tensor3<T>& out, std::size_t first = 0) {
  detail::expect_tiles("nn::patchify", image.m(), image.n(), patch, "patch side");
  const std::size_t grid = image.n() / patch, n = (image.m() / patch) * grid, d = patch * patch;
  TPROD_EXPECTS(out.n() == d && out.p() == image.p() && first + n <= out.m(),
                "nn::patchify: rows " + std::to_string(first) + ".." + std::to_string(first + n) + " of " +
                    std::to_string(d) + " positions and " + std::to_string(image.p()) + " channels do not fit the " +
                    out.shape() + " output");
  for (std::size_t k = 0; k < image.p(); ++k)
    for (std::size_t j = 0; j < d; ++j)
      for (std::size_t t = 0; t < n; ++t)
        out(first + t, j, k) = image(patch * (t / grid) + j / patch, patch * (t % grid) + j % patch, k);
}

/// @brief The N×P²×C patch tensor 𝒳 of an H×W×C image (paper 001 eq. 5.7).
/// @throws shape_error unless P ≥ 1 divides H and W.
template <class T>
tensor3<T> patchify(const tensor3<T>& image, std::size_t patch) {
  detail::expect_tiles("nn::patchify", image.m(), image.n(), patch, "patch side");
  tensor3<T> out((image.m() / patch) * (image.n() / patch), patch * patch, image.p(), uninitialized);
  patchify_into(image, patch, out);
  return out;
}

/// @brief A batch: B images of one shape → the (B·N)×P²×C tensor with image b's patches in rows b·N … b·N + N − 1,
/// the vision classifier's input (make_vit_classifier with patches = N, patch_features = P², slices = C).
/// @throws shape_error for an empty batch, images of different shapes, or P not dividing H and W.
template <class T>
tensor3<T> patchify(const std::vector<tensor3<T>>& images, std::size_t patch) {
  TPROD_EXPECTS(!images.empty(), "nn::patchify: the batch holds no image");
  const tensor3<T>& first = images.front();
  detail::expect_tiles("nn::patchify", first.m(), first.n(), patch, "patch side");
  const std::size_t n = (first.m() / patch) * (first.n() / patch);
  tensor3<T> out(images.size() * n, patch * patch, first.p(), uninitialized);
  for (std::size_t b = 0; b < images.size(); ++b) {
    TPROD_EXPECTS(images[b].extents() == first.extents(), "nn::patchify: image " + std::to_string(b) + " is " +
                                                              images[b].shape() + " but image 0 is " + first.shape());
    patchify_into(images[b], patch, out, b * n);
  }
  return out;
}

}  // namespace tprod::nn
