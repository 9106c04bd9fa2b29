// Nothing: libifcore.so is made of the folder libraries, taken whole (CMakeLists.txt).
