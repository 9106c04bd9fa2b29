# One helper registers every test: a GoogleTest binary per folder of tests/.
#   ifcore_add_test(NAME name SOURCES a.cc b.cc LIBS lib...)
function(ifcore_add_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS" ${ARGN})
  if(NOT T_SOURCES)
    message(STATUS "ifcore: ${T_NAME} has no sources yet")
    return()
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} ifcore_test_support GTest::gtest GTest::gmock
                        GTest::gtest_main Threads::Threads)
  set_target_properties(${T_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  # The test files themselves are compiled without optimisation in every tree: their code is
  # checks, not work (the libraries they drive keep the tree's flags: -O2, ASan's -O1,
  # TSan's instrumented -O2), and optimising gtest's expanded assertions took about half of
  # their compile time, most of what each tree costs CI.
  target_compile_options(${T_NAME} PRIVATE -O0)
  # Each binary's tests carry its name as a label (make tsan picks binaries by label).
  # Under TSan a report stops the process (a daemon a test started, too), so it fails.
  # atexit_sleep_ms=0: TSan's default makes every process sleep a second before it exits
  # (for threads left running at exit, which the tests join), most of the TSan stage's
  # time with a process per test.
  gtest_discover_tests(${T_NAME} DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS "${T_NAME}"
                       ENVIRONMENT "TSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1 atexit_sleep_ms=0")
endfunction()

# Links a program with tcmalloc when IFCORE_TCMALLOC found it (see the top CMakeLists.txt).
# IFCORE_TCMALLOC_LINKED tells the program's code (ifcored's heap reserve). With HUGE_PAGES,
# tcmalloc's heap is in huge pages (src/heap/huge_heap.cc): for the programs that may hold
# a million devices, not for a short-lived client such as ifc, whose few MiB would only grow.
function(ifcore_fast_malloc target)
  cmake_parse_arguments(M "HUGE_PAGES" "" "" ${ARGN})
  if(TARGET ${target} AND TARGET PkgConfig::TCMALLOC)
    target_link_libraries(${target} PRIVATE PkgConfig::TCMALLOC)
    target_compile_definitions(${target} PRIVATE IFCORE_TCMALLOC_LINKED)
    if(M_HUGE_PAGES)
      target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src/heap/huge_heap.cc)
    endif()
  endif()
endfunction()
