//! Host-side bindings, one `bindgen!` per world, from the project's `wit/`.

pub mod node_state {
    wasmtime::component::bindgen!({ world: "node-state-reporter", path: "../wit" });
}

pub mod boot_image {
    wasmtime::component::bindgen!({ world: "boot-image-selector", path: "../wit" });
}
