# libubikit as a library programs use (issue 7 part 2), included by the
# top-level CMakeLists.txt after the layers and the tool:
#   - libubikit.so.MAJOR.MINOR.PATCH (SONAME libubikit.so.MAJOR) exporting
#     only ubikit_* (cmake/ubikit.map), and libubikit.a; both hold the
#     layers util, flash, ubi, ubifs, fs and image, and torture (not the
#     FUSE front end);
#   - `cmake --install`: the tool, both libraries, the public headers
#     (include/ubikit/*.h + the generated version.h), ubikit.pc for
#     pkg-config, a CMake package (find_package(ubikit): ubikit::ubikit,
#     ubikit::ubikit_static) and the man pages;
#   - man pages made at build time from the commands' --help
#     (cmake/gen_man.sh).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
find_package(Threads REQUIRED)
find_package(OpenSSL COMPONENTS Crypto) # as src/ubifs (its target is local there)

set(UBIKIT_LAYERS ubikit_util ubikit_flash ubikit_ubi ubikit_ubifs ubikit_fs ubikit_image)
if(TARGET ubikit_torture) # include/ubikit/torture.h
  list(APPEND UBIKIT_LAYERS ubikit_torture)
endif()
set(ubikit_lib_objects)
foreach(l ${UBIKIT_LAYERS})
  list(APPEND ubikit_lib_objects $<TARGET_OBJECTS:${l}>)
endforeach()

# What the layers link outside the project (both libraries need them).
set(ubikit_lib_deps ZLIB::ZLIB Threads::Threads m)
set(ubikit_pc_requires "zlib")
set(ubikit_static_install_deps ZLIB::ZLIB Threads::Threads m)
if(TARGET OpenSSL::Crypto) # fscrypt, authentication (src/ubifs)
  list(APPEND ubikit_lib_deps OpenSSL::Crypto)
  string(APPEND ubikit_pc_requires " libcrypto")
  list(APPEND ubikit_static_install_deps crypto)
endif()
if(UBIKIT_WITH_LZO)
  list(APPEND ubikit_lib_deps PkgConfig::LZO2)
  string(APPEND ubikit_pc_requires " lzo2")
  list(APPEND ubikit_static_install_deps lzo2)
endif()
if(UBIKIT_WITH_LIBDEFLATE)
  list(APPEND ubikit_lib_deps PkgConfig::LIBDEFLATE)
  string(APPEND ubikit_pc_requires " libdeflate")
  list(APPEND ubikit_static_install_deps deflate)
endif()
if(UBIKIT_WITH_ZSTD)
  list(APPEND ubikit_lib_deps PkgConfig::ZSTD)
  string(APPEND ubikit_pc_requires " libzstd")
  list(APPEND ubikit_static_install_deps zstd)
endif()

add_library(ubikit_shared SHARED ${ubikit_lib_objects})
set_target_properties(ubikit_shared PROPERTIES
  OUTPUT_NAME ubikit
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}
  EXPORT_NAME ubikit
  LINK_DEPENDS ${CMAKE_SOURCE_DIR}/cmake/ubikit.map)
target_link_options(ubikit_shared PRIVATE "LINKER:--version-script=${CMAKE_SOURCE_DIR}/cmake/ubikit.map")
target_link_libraries(ubikit_shared PRIVATE ${ubikit_lib_deps})
target_include_directories(ubikit_shared INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

add_library(ubikit_static STATIC ${ubikit_lib_objects})
set_target_properties(ubikit_static PROPERTIES OUTPUT_NAME ubikit EXPORT_NAME ubikit_static)
# Inside the build the imported targets; once installed, the plain names
# (the package config finds ZLIB and Threads; lzo2, libdeflate and zstd are
# system libraries).
target_link_libraries(ubikit_static INTERFACE
  $<BUILD_INTERFACE:${ubikit_lib_deps}>
  $<INSTALL_INTERFACE:${ubikit_static_install_deps}>)
target_include_directories(ubikit_static INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

# ---- install ----
install(TARGETS ubikit RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ubikit_shared ubikit_static EXPORT ubikitTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
file(GLOB ubikit_public_headers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/include/ubikit/*.h)
install(FILES ${ubikit_public_headers} ${CMAKE_BINARY_DIR}/include/ubikit/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ubikit)

# relocatable: the prefix is found from the .pc file's own place, so that
# `cmake --install --prefix P` gives a file that is right under P
file(RELATIVE_PATH ubikit_pc_to_prefix /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(${CMAKE_SOURCE_DIR}/cmake/ubikit.pc.in ${CMAKE_BINARY_DIR}/ubikit.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/ubikit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(EXPORT ubikitTargets NAMESPACE ubikit:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ubikit)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/ubikitConfig.cmake.in
  ${CMAKE_BINARY_DIR}/ubikitConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ubikit)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/ubikitConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/ubikitConfig.cmake ${CMAKE_BINARY_DIR}/ubikitConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ubikit)

# ---- man pages: ubikit(1) and ubikit-COMMAND(1), from --help ----
set(ubikit_man_dir ${CMAKE_BINARY_DIR}/man)
add_custom_command(OUTPUT ${ubikit_man_dir}/ubikit.1
  COMMAND bash ${CMAKE_SOURCE_DIR}/cmake/gen_man.sh $<TARGET_FILE:ubikit> ${ubikit_man_dir} ${PROJECT_VERSION}
  DEPENDS ubikit ${CMAKE_SOURCE_DIR}/cmake/gen_man.sh
  COMMENT "Man pages from the commands' --help")
add_custom_target(ubikit_man ALL DEPENDS ${ubikit_man_dir}/ubikit.1)
install(DIRECTORY ${ubikit_man_dir}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 FILES_MATCHING PATTERN "*.1")
