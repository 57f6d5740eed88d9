# Installation and packaging (included by the top-level CMakeLists.txt):
#   make install PREFIX=/usr/local DESTDIR=/tmp/root   (Makefile: configure
#                    with CMAKE_INSTALL_PREFIX, then cmake --install)
#   make package                                       (cpack -G DEB, prefix /usr)
# What goes where (PREFIX=/usr: the .deb's layout; /etc for /usr, else
# PREFIX/etc):
#   bin/stormwatch                                 the binary
#   share/man/man1/stormwatch.1                    from the --help texts (help2man)
#   share/bash-completion/completions/stormwatch   bash completion
#   lib/systemd/system/stormwatch{,-notify,-ship}.service  systemd units
#   SYSCONFDIR/stormwatch/stormwatch.conf          example configuration (a conffile)
#   share/stormwatch/monitoring/                   Prometheus rules, Grafana dashboard
#   share/doc/stormwatch/                          README, CHANGELOG, LICENSE, operating.md
# tests/e2e/test_install.sh checks the tree, the units and the .deb.
include(GNUInstallDirs)

# The units' stop timeout follows the daemon's stop budget: the default of
# shutdown.timeout.ms (src/conf/sw_conf_table.c) plus 15 s, as the
# Kubernetes grace period (45 s for 30 s).
file(STRINGS ${PROJECT_SOURCE_DIR}/src/conf/sw_conf_table.c SW_SHUTDOWN_LINE
     REGEX "INT_PROP\\(\"shutdown\\.timeout\\.ms\"")
string(REGEX MATCH "\"([0-9]+)\",[^\"]*$" _m "${SW_SHUTDOWN_LINE}")
set(SW_SHUTDOWN_MS ${CMAKE_MATCH_1})
if(NOT SW_SHUTDOWN_MS)
  message(FATAL_ERROR "no default of shutdown.timeout.ms in src/conf/sw_conf_table.c")
endif()
math(EXPR SW_STOP_TIMEOUT_S "${SW_SHUTDOWN_MS} / 1000 + 15")

set(SW_BINDIR ${CMAKE_INSTALL_FULL_BINDIR})
set(SW_CONFDIR ${CMAKE_INSTALL_FULL_SYSCONFDIR}/stormwatch)
set(SW_ENVFILE ${CMAKE_INSTALL_FULL_SYSCONFDIR}/default/stormwatch)
set(SW_UNITDIR ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
foreach(unit stormwatch stormwatch-notify stormwatch-ship)
  configure_file(${PROJECT_SOURCE_DIR}/deploy/systemd/${unit}.service.in
                 ${CMAKE_BINARY_DIR}/systemd/${unit}.service @ONLY)
endforeach()

install(TARGETS stormwatch RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_BINARY_DIR}/systemd/stormwatch.service
              ${CMAKE_BINARY_DIR}/systemd/stormwatch-notify.service
              ${CMAKE_BINARY_DIR}/systemd/stormwatch-ship.service
        DESTINATION lib/systemd/system)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/stormwatch.conf DESTINATION ${SW_CONFDIR})
install(FILES ${PROJECT_SOURCE_DIR}/deploy/completion/stormwatch.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME stormwatch)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/monitoring/stormwatch-rules.yml
              ${PROJECT_SOURCE_DIR}/deploy/monitoring/stormwatch-dashboard.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/stormwatch/monitoring)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md
              ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/docs/operating.md
              ${PROJECT_SOURCE_DIR}/docs/properties.md ${PROJECT_SOURCE_DIR}/docs/semantics.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} OPTIONAL)

# The man page, from the built binary's --help texts (help2man). Not in
# sanitizer or fuzz builds (their binary is not the one installed); without
# help2man the install has no man page (said here).
find_program(HELP2MAN help2man)
if(HELP2MAN AND NOT SW_SANITIZE AND NOT SW_FUZZ)
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/stormwatch.1
    COMMAND sh ${PROJECT_SOURCE_DIR}/scripts/man.sh $<TARGET_FILE:stormwatch> ${CMAKE_BINARY_DIR}/stormwatch.1
    DEPENDS stormwatch ${PROJECT_SOURCE_DIR}/scripts/man.sh
    COMMENT "stormwatch.1 from the --help texts (help2man)" VERBATIM)
  add_custom_target(man ALL DEPENDS ${CMAKE_BINARY_DIR}/stormwatch.1)
  install(FILES ${CMAKE_BINARY_DIR}/stormwatch.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
elseif(NOT HELP2MAN)
  message(STATUS "help2man not found: no man page (apt-get install help2man)")
endif()

# cpack -G DEB: one package, dependencies from the binary's libraries
# (dpkg-shlibdeps), the configuration file kept on upgrades (conffiles).
# Configure with -DCMAKE_INSTALL_PREFIX=/usr for a Debian layout (make package does).
set(CPACK_PACKAGE_NAME stormwatch)
set(CPACK_PACKAGE_VENDOR stormwatch)
set(CPACK_PACKAGE_CONTACT "The stormwatch authors")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "first-cause detection of GPU memory storms in Kafka telemetry")
set(CPACK_PACKAGE_DESCRIPTION
    "stormwatch reads the GPU memory telemetry of distributed training jobs from Kafka and writes, the moment a memory storm starts, which rank moved first (with lead, confidence and phase) to an alert topic; stormwatch notify pages Alertmanager, PagerDuty and webhooks.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_STRIP_FILES TRUE)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Loaded when first used (dlopen: src/net/sw_curl_dl.c, src/ops/sw_mhd_dl.c),
# so dpkg-shlibdeps does not see them: named here.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libcurl4, libmicrohttpd12")
file(WRITE ${CMAKE_BINARY_DIR}/debian/conffiles "${SW_CONFDIR}/stormwatch.conf\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/debian/conffiles)
include(CPack)
