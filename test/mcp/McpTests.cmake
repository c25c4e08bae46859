# aiprof mcp driven by the official MCP TypeScript SDK's client (issue #28):
# test/mcp/mcp_sdk_test.js. The mcp_npm_install fixture installs
# @modelcontextprotocol/sdk, pinned by test/mcp/package-lock.json, into
# <build>/mcp/node_modules with the browser tests' installer
# (test/browser/install_modules.cmake). Include after BrowserTests.cmake (it
# finds node and npm). Both tests are labelled heavy.
set(AIPROF_MCP_DIR ${CMAKE_BINARY_DIR}/mcp)
add_test(NAME mcp_npm_install
  COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_CURRENT_LIST_DIR} -DDEST=${AIPROF_MCP_DIR} -DNPM=${AIPROF_NPM}
          -DPACKAGE=@modelcontextprotocol/sdk -P ${PROJECT_SOURCE_DIR}/test/browser/install_modules.cmake)
set_tests_properties(mcp_npm_install PROPERTIES FIXTURES_SETUP mcp_modules LABELS heavy TIMEOUT 600)
add_test(NAME mcp_sdk_client
  COMMAND ${AIPROF_NODE} ${CMAKE_CURRENT_LIST_DIR}/mcp_sdk_test.js
          --aiprof $<TARGET_FILE:aiprof> --data ${PROJECT_SOURCE_DIR}/test/data)
set_tests_properties(mcp_sdk_client PROPERTIES FIXTURES_REQUIRED mcp_modules LABELS heavy TIMEOUT 300
  ENVIRONMENT NODE_PATH=${AIPROF_MCP_DIR}/node_modules)
