# Applied to every target so that the instrumented runtime sees all of our code.
if(IC_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
elseif(IC_SANITIZE STREQUAL "fuzzer")
  # The clang preset: ASan + UBSan plus libFuzzer's coverage everywhere; only the fuzz
  # executables link libFuzzer's runtime (fuzz/). The tests link ASan's, which defines the
  # coverage callbacks as no-ops, so they are ordinary ASan + UBSan tests.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
elseif(IC_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT IC_SANITIZE STREQUAL "")
  message(FATAL_ERROR
          "IC_SANITIZE must be '', 'address', 'thread' or 'fuzzer', not '${IC_SANITIZE}'")
endif()
