// Links libscatterptx through its installed package and calls the C++ API.
// Without a GPU it prints the library's own explanation and exits 0; with one
// it adds nothing (src_rows = 0 is a documented no-op) and asks for a plan.
#include <cstdio>

#include "scatterptx/scatterptx.hpp"

int main() {
  scatterptx_scatter_add_args args;
  scatterptx_scatter_add_args_init(&args);
  args.src_rows = 0;  // nothing to add: succeeds without touching the driver
  args.cols = 128;
  args.out_row_stride = 128;
  args.src_row_stride = 128;
  if (scatterptx_scatter_add(&args, nullptr) != SCATTERPTX_SUCCESS) {
    std::printf("unexpected: %s\n", scatterptx_last_error_message());
    return 1;
  }
  try {
    scatterptx::prepare();
    std::printf("libscatterptx ready on this GPU\n");
  } catch (const scatterptx::Error& error) {
    std::printf("libscatterptx linked; no usable GPU here: %s\n", error.what());
    const bool expected = error.status() == SCATTERPTX_ERROR_NO_DRIVER ||
                          error.status() == SCATTERPTX_ERROR_NO_CONTEXT ||
                          error.status() == SCATTERPTX_ERROR_UNSUPPORTED_DEVICE;
    return expected ? 0 : 1;
  }
  return 0;
}
