# `cmake --install build [--prefix DIR]`: the executables, the libraries with their headers as a
# CMake package (`find_package(wsemu)` gives wsemu::isa, wsemu::emulator, wsemu::compiler,
# wsemu::host, ..., and wsemu::runtime for the whole host side) and a pkg-config file, and the
# data the tools read at run time (the memcpy firmware, the weight-streaming kernels, the CSL
# standard library), under
# share/wsemu/, where an installed binary finds them (firmware/data_paths.hpp).
include(CMakePackageConfigHelpers)

install(TARGETS wsemu wsemu-memoryx wsemu-swarmx RUNTIME DESTINATION bin)

foreach(folder isa emulator inspect firmware compiler runtime)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${folder} DESTINATION include/wsemu
    FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h" PATTERN "*.def"
    PATTERN "python" EXCLUDE)
  install(DIRECTORY ${PROJECT_BINARY_DIR}/${folder} DESTINATION include/wsemu
    FILES_MATCHING PATTERN "*.pb.h" PATTERN "*_paths.hpp"
    PATTERN "CMakeFiles" EXCLUDE)
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/wsemu_version.hpp DESTINATION include/wsemu)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/firmware/ DESTINATION share/wsemu/firmware
  FILES_MATCHING PATTERN "*.wsa" PATTERN "README.md")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernels/weight-streaming/ DESTINATION share/wsemu/kernels/weight-streaming
  FILES_MATCHING PATTERN "*.wsa" PATTERN "*.wsl" PATTERN "README.md")
if(EXISTS ${PROJECT_SOURCE_DIR}/compiler/csl/lib)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/compiler/csl/lib/ DESTINATION share/wsemu/csl-lib)
endif()

# The cluster's handshake and TLS link OpenSSL's libcrypto and libssl when it is built with them.
set(WSEMU_FIND_OPENSSL "")
get_target_property(cluster_links wsemu_cluster INTERFACE_LINK_LIBRARIES)
if("OpenSSL::Crypto" IN_LIST cluster_links)
  set(WSEMU_FIND_OPENSSL "find_dependency(OpenSSL COMPONENTS Crypto SSL)")
endif()
install(EXPORT wsemuTargets NAMESPACE wsemu:: DESTINATION lib/cmake/wsemu)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/wsemuConfig.cmake.in
  ${PROJECT_BINARY_DIR}/wsemuConfig.cmake INSTALL_DESTINATION lib/cmake/wsemu)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/wsemuConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/wsemuConfig.cmake ${PROJECT_BINARY_DIR}/wsemuConfigVersion.cmake
  DESTINATION lib/cmake/wsemu)

# pkg-config: the emulator and the ISA (the parts usable without CMake's imported targets).
configure_file(${PROJECT_SOURCE_DIR}/cmake/wsemu.pc.in ${PROJECT_BINARY_DIR}/wsemu.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/wsemu.pc DESTINATION lib/pkgconfig)
